/**
 * Versioned schemas for any SQLite-backed Durable Object, made to cost few billed rows.
 *
 * A new object is created at the current version directly (`createSchema`): its tables and
 * nothing else. The version is a column of the object's one-row record (the session row, the
 * task row) whose DEFAULT is the current version, so it is recorded by the record's own
 * INSERT: no bookkeeping table, whose creation alone would cost three rows written
 * (bench/README.md, *What is billed*). An object stored by an older version is brought up to
 * date by its upgrades (`upgradeSchema`), which record the new version in that column.
 * Objects stored before this scheme kept their version in a `schema_migrations` table; it is
 * read, and dropped by the upgrade that replaces it.
 *
 * An object decides *when* to do either: the session object when a session is created,
 * revived or its alarm runs, never for an unknown id, so such an object writes nothing.
 */
export interface Schema {
  /** The current version, ≥ 1. */
  readonly version: number;
  /** The one-row table and the column that record the version (its DEFAULT is `version`). */
  readonly record: { readonly table: string; readonly column: string };
  /** Creates the current schema in an empty database. */
  readonly create: readonly string[];
  /** `upgrades[v]` takes a database of version v to v + 1, for every v from the oldest kept to version - 1. */
  readonly upgrades: Readonly<Record<number, readonly string[]>>;
}

/** The version of what is stored: 0 when nothing is. Reads only. */
export function storedVersion(sql: SqlStorage, schema: Schema): number {
  const tables = new Set(
    sql
      .exec<{ name: string }>(
        `SELECT name FROM sqlite_master WHERE type = 'table' AND name IN ('schema_migrations', ?)`,
        schema.record.table,
      )
      .toArray()
      .map((row) => row.name),
  );
  if (tables.has('schema_migrations')) {
    return sql.exec<{ id: number | null }>(`SELECT max(id) AS id FROM schema_migrations`).one().id ?? 0;
  }
  if (!tables.has(schema.record.table)) return 0;
  return sql.exec<{ version: number }>(`SELECT ${schema.record.column} AS version FROM ${schema.record.table}`).toArray()[0]?.version ?? 0;
}

/** Creates the current schema. Call inside `storage.transactionSync`, on an empty database. */
export function createSchema(sql: SqlStorage, schema: Schema): void {
  for (const statement of schema.create) sql.exec(statement);
}

/**
 * Brings a stored schema to the current version; a no-op when it is current. Call inside
 * `storage.transactionSync`, for an object whose record exists.
 */
export function upgradeSchema(sql: SqlStorage, schema: Schema): void {
  const from = storedVersion(sql, schema);
  if (from === 0) throw new Error('upgradeSchema: nothing is stored');
  if (from > schema.version) throw new Error(`stored schema version ${from} is newer than this code's ${schema.version}`);
  if (from === schema.version) return;
  for (let version = from; version < schema.version; version++) {
    const statements = schema.upgrades[version];
    if (statements === undefined) throw new Error(`no upgrade from schema version ${version}`);
    for (const statement of statements) sql.exec(statement);
  }
  sql.exec(`UPDATE ${schema.record.table} SET ${schema.record.column} = ?`, schema.version);
}

/** Whether the table exists: an object that never created its schema holds none. */
export function tableExists(sql: SqlStorage, table: string): boolean {
  return sql.exec(`SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?`, table).toArray().length > 0;
}
