/**
 * events/subscribe and events/unsubscribe under AUTH=none (the default project): the anonymous
 * principal is everyone, and SEP-3415 says servers "MUST reject calls without an authorized
 * principal with `Forbidden`". The refusal comes before the params are looked at, so the URL is
 * never used (this project has no WEBHOOK_DEV_ORIGINS: the callback is a public https URL).
 */
import { describe, expect, it } from 'vitest';
import { eventsRequest } from '../support/events-http.ts';
import { answerOf } from '../support/modern-http.ts';

describe('an unauthenticated principal', () => {
  it.each([
    ['events/subscribe', { name: 'demo.note', arguments: {}, delivery: { url: 'https://receiver.example/hook', secret: 'whsec_x' } }],
    ['events/unsubscribe', { name: 'demo.note', arguments: {}, delivery: { url: 'https://receiver.example/hook' } }],
    ['events/subscribe', { name: 'demo.nope' }],
  ])('%s: Forbidden {reason: "unauthenticated"} (-32024), whatever the params', async (method, params) => {
    const answer = await answerOf(await eventsRequest(method, params));
    expect(answer.result).toBeUndefined();
    expect(answer.error).toMatchObject({ code: -32024, data: { reason: 'unauthenticated' } });
  });
});
