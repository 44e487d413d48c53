/**
 * MRTR requestState (2026-07-28): what a tool hands the client comes back as attacker input, so
 * it is sealed (HMAC), bound to its request's method and target, and short-lived. A state that
 * was altered, that belongs to another tool, or that expired is refused with the SDK's -32602.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { answerOf, modernRequest } from '../support/modern-http.ts';

const ELICIT = { elicitation: {} };
const confirm = { confirm: { action: 'accept', content: { ok: true } } };

/** Round 1 of the fixture's request-state tool: its inputRequests and sealed state. */
async function firstRound(tool = 'test_input_required_result_request_state') {
  const answer = await answerOf(await modernRequest('tools/call', { name: tool, arguments: {} }, ELICIT));
  expect(answer.result).toMatchObject({ resultType: 'input_required', requestState: expect.any(String) });
  return answer.result.requestState as string;
}

const retry = (tool: string, requestState: string) =>
  modernRequest('tools/call', { name: tool, arguments: {}, inputResponses: confirm, requestState }, ELICIT);

afterEach(() => vi.useRealTimers());

describe('requestState', () => {
  it('echoed unchanged with the answer, completes the call', async () => {
    const state = await firstRound();
    const answer = await answerOf(await retry('test_input_required_result_request_state', state));
    expect(answer.result).toMatchObject({ content: [{ type: 'text', text: 'state-ok' }] });
  });

  it.each([
    ['a changed payload', (s: string) => s.replace(/^v1\.([A-Za-z0-9_-]+)/, (_m, body: string) => `v1.${body.slice(0, -2)}AA`)],
    ['a changed signature', (s: string) => `${s.slice(0, -2)}${s.endsWith('AA') ? 'BB' : 'AA'}`],
    ['something appended', (s: string) => `${s}-TAMPERED`],
    ['not a state at all', () => 'hello'],
  ])('with %s, is refused', async (_name, tamper) => {
    const answer = await answerOf(await retry('test_input_required_result_request_state', tamper(await firstRound())));
    expect(answer.error).toMatchObject({ code: -32602, message: 'Invalid or expired requestState' });
  });

  it('minted for one tool, is refused by another', async () => {
    const state = await firstRound('test_input_required_result_tampered_state');
    const answer = await answerOf(await retry('test_input_required_result_request_state', state));
    expect(answer.error).toMatchObject({ code: -32602 });
  });

  it('past its time to live, is refused', async () => {
    const state = await firstRound();
    vi.useFakeTimers({ toFake: ['Date'] });
    vi.setSystemTime(Date.now() + 301_000);
    const answer = await answerOf(await retry('test_input_required_result_request_state', state));
    expect(answer.error).toMatchObject({ code: -32602 });
  });
});
