/**
 * For vitest.config.ts: keeps out of `npm test`'s output the workerd log lines a test causes on
 * purpose that `verbose: false` does not already keep out (and one wrangler warning, below), and
 * nothing else. The vitest plugin prints workerd's logs itself (process.stdout/stderr.write in vitest's own process) and takes
 * no handler for them, so the lines are dropped there: every listed line with its `stack:` line,
 * found anywhere in a write (vitest's renderer may join writes), and every other byte passed on
 * unchanged. A failing test's error is vitest's, not workerd's, and still prints in full.
 */

/** Each expected line: why it is expected, text it contains (cheap test) and the lines to drop. */
const EXPECTED = [
  {
    // abortAllDurableObjects() (cloudflare:test; only a test can call it) ends every object with
    // this error, on purpose: eviction, schema upgrade, task durability and restart tests.
    // Without --verbose workerd does not print it as a rule, but once in a dozen full runs it did
    // (with a two-frame stack, not the usual one), so it is dropped here too.
    marker: 'Application called abortAllDurableObjects()',
    lines:
      /^exception = workerd\/api\/unsafe\.c\+\+:\d+: failed: jsg\.Error: Application called abortAllDurableObjects\(\)\.\nstack:[^\n]*\n/gm,
  },
  {
    // wrangler's warning, once per run of the `misconfigured` project, that its UndeclaredTasks
    // class has no `exports` entry: the class is left undeclared on purpose (a class without
    // SQLite, test/misconfigured/). The whole warning, its suggested configuration included.
    marker: 'exported by this Worker (UndeclaredTasks)',
    lines:
      /^[^\n]*Processing test\/misconfigured\/wrangler\.toml configuration:[^\n]*\n\n {4}- In your wrangler\.toml file, you have configured `durable_objects` exported by this Worker \(UndeclaredTasks\)[^\n]*\n(?:[^\n]*\n)*? {6}```\n(?:[^\n]*\n)*? {6}```\n\n?/gm,
  },
];

const INSTALLED = Symbol.for('mcp-edge-sessions.test-quiet-workerd');

/** Wraps process.stdout.write and process.stderr.write, once. */
export function dropExpectedWorkerdLines() {
  if (process[INSTALLED]) return;
  process[INSTALLED] = true;
  for (const stream of [process.stdout, process.stderr]) {
    const write = stream.write;
    stream.write = function (chunk, encoding, callback) {
      const text = typeof chunk === 'string' ? chunk : chunk instanceof Uint8Array ? Buffer.from(chunk).toString() : '';
      const expected = EXPECTED.filter(({ marker }) => text.includes(marker));
      // biome-ignore lint/complexity/noArguments: passed on exactly as given
      if (expected.length === 0) return write.apply(this, arguments);
      const rest = expected.reduce((left, { lines }) => left.replace(lines, ''), text);
      // biome-ignore lint/complexity/noArguments: passed on exactly as given
      if (rest === text) return write.apply(this, arguments);
      const done = typeof encoding === 'function' ? encoding : callback;
      if (rest === '') {
        if (done) process.nextTick(done);
        return true;
      }
      return write.call(this, rest, typeof chunk === 'string' && typeof encoding === 'string' ? encoding : 'utf8', done);
    };
  }
}
