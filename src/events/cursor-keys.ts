/**
 * The keys MCP Events cursors are sealed with (core/event-cursor.ts): the `EVENTS_CURSOR_KEY`
 * secret, and `EVENTS_CURSOR_KEY_PREVIOUS` accepted too while a key is rotated.
 *
 * Unlike MRTR's requestState (valid five minutes, so a key of the isolate's own will do in
 * development), a cursor is kept by its client for days and presented to any isolate: a key
 * per isolate would refuse it as forged on the next. Without the secret, cursors are sealed
 * with a published development key — on loopback only, where the developer is the only client:
 * a cursor grants nothing (every poll and stream is authorized on its own, docs/events.md
 * choice 7), and its seal's work there is to refuse cursors of another log and garbled ones,
 * which a public key does as well. Beyond loopback, an events request without the secret is
 * answered with the configuration error that names the fix: never served under a public key.
 * Each problem with the keys is logged once per isolate and environment (`mcp.config.error`),
 * as every configuration error is, and names its variable, never its value.
 */
import { isLoopbackHostname } from '../core/allowlist.ts';
import { type CursorKeys, importCursorKey } from '../core/event-cursor.ts';
import { log } from '../core/log.ts';
import { MisconfiguredError, variableProblem } from '../core/misconfiguration.ts';

export interface CursorKeySecrets {
  readonly EVENTS_CURSOR_KEY?: string;
  readonly EVENTS_CURSOR_KEY_PREVIOUS?: string;
}

/** Public on purpose (see above): seals cursors only where the request's host is loopback. */
export const DEVELOPMENT_CURSOR_KEY = 'mcp-edge-sessions development cursor key: loopback only';

export const CURSOR_KEY_FIX =
  'set EVENTS_CURSOR_KEY, a secret of at least 32 bytes: openssl rand -base64 32 | npx wrangler secret put EVENTS_CURSOR_KEY';

const imported = new WeakMap<object, Promise<CursorKeys>>();
let developmentLogged = false;

/**
 * The cursor keys for a request to `url` under `env`, or the configuration error: no secret
 * beyond loopback, a previous key without a current one, a key shorter than 32 bytes.
 */
export async function cursorKeys(env: CursorKeySecrets, url: string): Promise<CursorKeys> {
  const { EVENTS_CURSOR_KEY: current, EVENTS_CURSOR_KEY_PREVIOUS: previous } = env;
  if (current === undefined) {
    if (previous !== undefined) {
      throw loggedOnce(env, misconfigured(`EVENTS_CURSOR_KEY_PREVIOUS is set without EVENTS_CURSOR_KEY: ${CURSOR_KEY_FIX}`));
    }
    if (!isLoopbackHostname(new URL(url).hostname)) {
      throw loggedOnce(env, misconfigured(`MCP Events needs a key to seal cursors with beyond loopback: ${CURSOR_KEY_FIX}`));
    }
    if (!developmentLogged) {
      developmentLogged = true;
      log({ msg: 'mcp.events.development_key' });
    }
    return developmentKeys();
  }
  let keys = imported.get(env);
  if (keys === undefined) {
    keys = importBoth(current, previous).catch((error: unknown) => {
      throw error instanceof MisconfiguredError ? loggedOnce(env, error) : error;
    });
    imported.set(env, keys);
  }
  return keys;
}

/** Environments whose cursor key problem was logged: once per isolate and environment, as every configuration error is. */
const logged = new WeakSet<object>();

function loggedOnce(env: CursorKeySecrets, error: MisconfiguredError): MisconfiguredError {
  if (!logged.has(env)) {
    logged.add(env);
    for (const { subject, detail } of error.problems) log({ msg: 'mcp.config.error', subject, error: detail });
  }
  return error;
}

let development: Promise<CursorKeys> | undefined;
function developmentKeys(): Promise<CursorKeys> {
  development ??= importCursorKey(DEVELOPMENT_CURSOR_KEY).then((key) => ({ current: key }));
  return development;
}

const PREVIOUS_KEY_FIX =
  'it is the key EVENTS_CURSOR_KEY held before the rotation, or deleted: npx wrangler secret delete EVENTS_CURSOR_KEY_PREVIOUS';

async function importBoth(current: string, previous: string | undefined): Promise<CursorKeys> {
  const keys = { current: await importNamed('EVENTS_CURSOR_KEY', current, CURSOR_KEY_FIX) };
  return previous === undefined ? keys : { ...keys, previous: await importNamed('EVENTS_CURSOR_KEY_PREVIOUS', previous, PREVIOUS_KEY_FIX) };
}

/** The key in `variable`, or the configuration error that names that variable and its fix (never its value). */
async function importNamed(variable: string, secret: string, fix: string): Promise<CryptoKey> {
  try {
    return await importCursorKey(secret);
  } catch (error) {
    // "configuration: the event cursor key must be at least 32 bytes", said of the variable by name.
    throw misconfigured(`${variable}: ${variableProblem(error).detail}; ${fix}`, variable);
  }
}

function misconfigured(detail: string, subject = 'EVENTS_CURSOR_KEY'): MisconfiguredError {
  return new MisconfiguredError([{ subject, detail }]);
}
