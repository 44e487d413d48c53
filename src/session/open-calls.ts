/**
 * Ending the calls a session still has open, each with an explicit error answer on its own
 * stream: stored, then delivered like any answer, so a client reading the stream live or
 * resuming it later gets everything before it and then the error — never a silent end.
 * Used when a fresh instance finds calls whose handlers died with the old one
 * (session-revival.ts), and when a session is ended from outside: an operator, a revoked
 * grant (session-object.ts).
 */
import type { RequestId } from '@modelcontextprotocol/server';
import type { JsonRpcMessage } from '../core/jsonrpc.ts';
import type { StreamRecord } from '../core/resume.ts';
import type { SessionStreams } from './session-streams.ts';

/**
 * Answers every unanswered request of the open request streams (`open`, when the caller has
 * read them already) with `answer(id)`, finishing the streams. Returns how many requests it
 * answered. Each answer is stored, then delivered to a connection attached to its stream: call
 * it inside a transaction of the caller's only where no connection can be attached (a fresh
 * instance reviving the session), or a rolled-back answer could already have been delivered.
 */
export function answerOpenCalls(
  streams: SessionStreams,
  answer: (id: RequestId) => JsonRpcMessage,
  open: readonly StreamRecord[] = streams.log.openRequestStreams(),
): number {
  let answered = 0;
  for (const { stream } of open) {
    for (const key of streams.log.requests.unanswered(stream)) {
      // The last answer finishes the stream, as any response does.
      streams.emit(stream, JSON.stringify(answer(JSON.parse(key) as RequestId)), key);
      answered++;
    }
    streams.finish(stream); // a no-op unless it had nothing unanswered
  }
  return answered;
}
