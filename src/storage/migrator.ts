/**
 * Numbered schema migrations for any SQLite-backed Durable Object: applied in order inside
 * the caller's transaction, the highest applied id stored in `schema_migrations`. An object
 * decides *when* to migrate (the session object: when a session is created, revived or its
 * alarm runs, never for an unknown id, so such an object writes nothing).
 */
export interface Migration {
  readonly id: number;
  readonly statements: readonly string[];
}

/** Applies every pending migration. Call inside `storage.transactionSync`. */
export function migrate(sql: SqlStorage, migrations: readonly Migration[]): void {
  migrations.forEach((migration, index) => {
    if (migration.id !== index + 1) throw new Error(`migration ids must be 1..n in order; found ${migration.id} at ${index}`);
  });
  sql.exec(`CREATE TABLE IF NOT EXISTS schema_migrations (id INTEGER PRIMARY KEY, applied_at INTEGER NOT NULL)`);
  const applied = sql.exec<{ id: number | null }>(`SELECT max(id) AS id FROM schema_migrations`).one().id ?? 0;
  for (const migration of migrations.slice(applied)) {
    for (const statement of migration.statements) sql.exec(statement);
    sql.exec(`INSERT INTO schema_migrations (id, applied_at) VALUES (?, ?)`, migration.id, Date.now());
  }
}

/** Whether any migration ever ran here: an object that never migrated holds no tables. */
export function schemaExists(sql: SqlStorage): boolean {
  return sql.exec(`SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'schema_migrations'`).toArray().length > 0;
}
