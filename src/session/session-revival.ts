/**
 * Reviving a session in a fresh object instance (after eviction, a crash or a deploy).
 */
import type { JSONRPCMessage } from '@modelcontextprotocol/server';
import { errorAnswer } from '../core/jsonrpc.ts';
import { log } from '../core/log.ts';
import { JsonRpcCode } from '../core/wire.ts';
import type { DurableTransport } from './durable-transport.ts';
import type { PendingAnswers } from './pending-answers.ts';
import type { SessionRecord, SessionStore } from './session-store.ts';
import type { SessionStreams } from './session-streams.ts';
import { answerOpenCalls } from './open-calls.ts';

/** JSON-RPC "internal error": the request did not complete, through no fault of the client. */
export const INTERRUPTED_CODE = JsonRpcCode.InternalError;

/**
 * Request streams left open by a previous instance have lost their handlers. Advance the
 * epoch and finish each with an explicit error response, so a resuming client gets a
 * gap-free replay followed by that error — never events from a handler re-created with
 * default state. Call before serving anything else. Returns the record, and how many
 * requests were so interrupted.
 */
export function interruptOrphanedStreams(
  storage: DurableObjectStorage,
  sessions: SessionStore,
  streams: SessionStreams,
  record: SessionRecord,
): { readonly record: SessionRecord; readonly interrupted: number } {
  const orphaned = streams.log.openRequestStreams();
  if (orphaned.length === 0) return { record, interrupted: 0 };
  return storage.transactionSync(() => {
    const epoch = sessions.advanceEpoch();
    const interrupted = answerOpenCalls(
      streams,
      (id) =>
        errorAnswer(id, INTERRUPTED_CODE, 'Request interrupted: the server instance running it stopped; it may have partly run', {
          reason: 'request_interrupted',
          epoch,
        }),
      orphaned,
    );
    return { record: { ...record, epoch }, interrupted };
  });
}

/**
 * Replays the handshake into a fresh McpServer: from `initialize` the SDK restores the
 * client's capabilities, info and protocol version; from `logging/setLevel` the threshold.
 * The answers are taken by `pending` and never delivered.
 */
export async function replayHandshake(transport: DurableTransport, pending: PendingAnswers, record: SessionRecord): Promise<void> {
  const replay = async (method: string, params: Record<string, unknown>): Promise<boolean> => {
    const id = `revive:${method}`;
    const answer = pending.expect(id);
    transport.receive({ jsonrpc: '2.0', id, method, params } as JSONRPCMessage);
    return !('error' in (await answer));
  };
  // A server that refuses its own stored handshake (say, after an SDK upgrade) must not go on
  // serving the session uninitialized.
  if (!(await replay('initialize', record.initializeParams))) throw new Error('the McpServer refused the replayed initialize');
  // A refused level only means logs are not filtered as asked (a session stored before levels
  // were kept only once accepted may hold one its server never took): serve on regardless.
  if (record.logLevel !== null && !(await replay('logging/setLevel', { level: record.logLevel }))) {
    log({ msg: 'mcp.session.level_refused', level: record.logLevel });
  }
}
