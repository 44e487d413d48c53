/**
 * The configuration error (core/misconfiguration.ts): its wire form, one message for every
 * problem, a variable's error as a problem (and nothing else of a thrown error), and workerd's
 * refusal of storage to a class without SQLite recognised in both its wordings.
 */
import { describe, expect, it } from 'vitest';
import { errorBody } from '../../src/core/errors.ts';
import { isSqlUnavailable, MisconfiguredError, sqlProblem, unservedTaskProblem, variableProblem } from '../../src/core/misconfiguration.ts';

/** workerd 1.20261117's words, as the objects of test/misconfigured/ throw them. */
const SQL_REFUSED =
  "SQL is not enabled for this Durable Object class. To enable it, change `new_classes` to `new_sqlite_classes` within the 'migrations' field in your wrangler.jsonc or wrangler.toml file.";
const KV_REFUSED =
  "The storage.kv (synchronous KV) API is only available for SQLite-backed Durable Objects, but this object's namespace is not declared to use SQLite.";

describe('MisconfiguredError', () => {
  it('is a 500 with -32603 and a message that starts "server misconfigured: "', () => {
    const error = new MisconfiguredError([{ subject: 'X', detail: 'X is not bound: add it' }]);
    expect({ status: error.status, code: error.code }).toEqual({ status: 500, code: -32603 });
    expect(JSON.parse(errorBody(error))).toEqual({
      jsonrpc: '2.0',
      id: null,
      error: { code: -32603, message: 'server misconfigured: X is not bound: add it' },
    });
  });

  it('names every problem in one message, numbered', () => {
    const error = new MisconfiguredError([
      { subject: 'A', detail: 'A is wrong' },
      { subject: 'B', detail: 'B is wrong' },
    ]);
    expect(error.message).toBe('server misconfigured, 2 problems: (1) A is wrong (2) B is wrong');
  });

  it('answers the request it refuses by its id', () => {
    expect(new MisconfiguredError([{ subject: 'A', detail: 'a' }], 7).id).toBe(7);
  });
});

describe('variableProblem', () => {
  it.each([
    {
      name: "a variable's error: its words, without the prefix",
      error: new Error('configuration: AUTH=jwt needs AUTH_ISSUER'),
      detail: 'AUTH=jwt needs AUTH_ISSUER',
    },
    {
      name: 'anything else: not quoted (its message may carry a value)',
      error: new TypeError('Invalid URL: https://user:hunter2@idp.example'),
      detail: 'the configuration could not be read (the cause is in the log)',
    },
    { name: 'a thrown non-Error', error: 'configuration: x', detail: 'the configuration could not be read (the cause is in the log)' },
  ])('$name', ({ error, detail }) => {
    expect(variableProblem(error)).toEqual({ subject: '[vars]', detail });
  });
});

describe('isSqlUnavailable', () => {
  it.each([
    { name: "storage.sql's refusal", error: new Error(SQL_REFUSED), is: true },
    { name: "storage.kv's refusal", error: new Error(KV_REFUSED), is: true },
    { name: 'as it crosses from an object (Error: …)', error: new Error(`Error: ${SQL_REFUSED}`), is: true },
    { name: 'a string', error: SQL_REFUSED, is: true },
    { name: 'another storage error', error: new Error('SQLITE_FULL: database or disk is full'), is: false },
    { name: 'nothing', error: undefined, is: false },
  ])('$name: $is', ({ error, is }) => {
    expect(isSqlUnavailable(error)).toBe(is);
  });
});

describe('the fixes', () => {
  it('a class without SQLite: exports first, migrations for a deployment on them, and no conversion', () => {
    const { subject, detail } = sqlProblem('MCP_TASKS', 'your class extending McpTaskObject');
    expect(subject).toBe('MCP_TASKS');
    expect(detail).toContain('the Durable Object class bound as MCP_TASKS (your class extending McpTaskObject) has no SQLite storage');
    expect(detail).toContain('[exports] <its class_name> = { type = "durable-object", storage = "sqlite" }');
    expect(detail).toContain('a new tag with new_sqlite_classes = ["<its class_name>"]');
    expect(detail).toContain('cannot be converted');
  });

  it('runTask where no tasks are served: the tool, and both ways out', () => {
    const { detail } = unservedTaskProblem('report', '[[durable_objects.bindings]] name = "MCP_TASKS"');
    expect(detail).toMatch(/^the tool "report" runs as a task \(runTask\)/);
    expect(detail).toContain(
      'pass `tasks: (env) => env.MCP_TASKS` to createMcpWorker and add to wrangler.toml [[durable_objects.bindings]] name = "MCP_TASKS"',
    );
    expect(detail).toContain("or call the tool's work without runTask");
  });
});
