/**
 * The fixture's Worker and classes, and a subclass of each object class that the project's
 * wrangler.toml declares without SQLite (`storage = "legacy-kv"`), or not at all: a test binds
 * one in place of its SQLite class (an environment copy) and sees what a deployment that forgot
 * the declaration sees (test/misconfigured/sqlite-storage.test.ts).
 */
import { McpEventBus, McpEventLog, McpPrincipalRegistry } from '../../src/lib.ts';
import fixture, { FixtureSession, FixtureTasks, FixtureWebhooks } from '../fixture-server/index.ts';

export { FixtureSession, FixtureTasks, FixtureWebhooks, McpEventBus, McpEventLog, McpPrincipalRegistry };

/** Declared `storage = "legacy-kv"`. */
export class KvSession extends FixtureSession {}
export class KvTasks extends FixtureTasks {}
export class KvRegistry extends McpPrincipalRegistry {}
export class KvBus extends McpEventBus {}
export class KvEvents extends McpEventLog {}

/** Bound, exported, and declared nowhere (no `exports` entry, no migration). */
export class UndeclaredTasks extends FixtureTasks {}

export default fixture;
