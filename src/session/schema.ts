/**
 * Numbered schema migrations, applied in order inside one transaction; the highest applied
 * id is stored. Migrations run when a session is created, and when an instance revives a
 * session stored by an older version; never for an unknown session id, so an object addressed
 * with one never writes anything (a session is never minted lazily).
 */
export interface Migration {
  readonly id: number;
  readonly statements: readonly string[];
}

export const MIGRATIONS: readonly Migration[] = [
  {
    id: 1,
    statements: [
      `CREATE TABLE session (
         singleton          INTEGER PRIMARY KEY CHECK (singleton = 1),
         protocol_version   TEXT    NOT NULL,
         -- The client's initialize params, replayed into a fresh McpServer after eviction.
         initialize_params  TEXT    NOT NULL,
         log_level          TEXT,
         epoch              INTEGER NOT NULL,
         standalone_stream  INTEGER,
         created_at         INTEGER NOT NULL,
         last_active_at     INTEGER NOT NULL
       )`,
      // AUTOINCREMENT: SQLite never hands out a stream number twice, even after deletes.
      `CREATE TABLE streams (
         stream          INTEGER PRIMARY KEY AUTOINCREMENT,
         epoch           INTEGER NOT NULL,
         kind            TEXT    NOT NULL CHECK (kind IN ('request', 'standalone')),
         state           TEXT    NOT NULL CHECK (state IN ('open', 'finished', 'superseded')),
         -- Events with seq <= pruned_through were deleted; the last seq is derived from
         -- events, so appending an event is one INSERT.
         pruned_through  INTEGER NOT NULL DEFAULT 0,
         ended_at        INTEGER
       )`,
      `CREATE TABLE events (
         stream   INTEGER NOT NULL,
         seq      INTEGER NOT NULL,
         message  TEXT    NOT NULL,
         PRIMARY KEY (stream, seq)
       ) WITHOUT ROWID`,
      // Every client request id ever used in the session: the spec forbids reuse, and this
      // is how a re-sent request is recognised instead of executed twice.
      `CREATE TABLE requests (
         request_key  TEXT    PRIMARY KEY,
         stream       INTEGER NOT NULL,
         answered     INTEGER NOT NULL DEFAULT 0
       ) WITHOUT ROWID`,
      `CREATE INDEX requests_by_stream ON requests (stream)`,
    ],
  },
  {
    id: 2,
    statements: [
      // A message longer than one SQLite value may be (2 MB in a Durable Object) is stored in
      // parts: its events row holds the first, this table the rest, numbered from 1.
      `CREATE TABLE event_parts (
         stream  INTEGER NOT NULL,
         seq     INTEGER NOT NULL,
         part    INTEGER NOT NULL,
         chunk   TEXT    NOT NULL,
         PRIMARY KEY (stream, seq, part)
       ) WITHOUT ROWID`,
    ],
  },
];

export function schemaExists(sql: SqlStorage): boolean {
  return sql.exec(`SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'schema_migrations'`).toArray().length > 0;
}

/** Applies every pending migration. Call inside `storage.transactionSync`. */
export function migrate(sql: SqlStorage, migrations: readonly Migration[] = MIGRATIONS): void {
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
