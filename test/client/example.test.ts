/**
 * The README's client example (examples/client/countdown.ts) runs as written, against the
 * Worker under test, with its call's stream cut twice: every progress step and the result
 * arrive, through resumes. And the README shows that example's code.
 */
import { describe, expect, it } from 'vitest';
import readme from '../../README.md?raw';
import example from '../../examples/client/countdown.ts?raw';
import { countdown } from '../../examples/client/countdown.ts';
import { URL_ } from '../support/mcp-http.ts';
import { faultyFetch } from './faults.ts';

describe("the README's client example", () => {
  it('gets every progress step and the result of a call whose stream is cut twice', async () => {
    const fetch = faultyFetch((request) => request.rpc === 'tools/call' || request.lastEventId !== null, [140, 260]);
    const { steps, text } = await countdown(URL_, fetch);
    expect(steps).toEqual([1, 2, 3, 4, 5]);
    expect(text).toBe('liftoff after 5');
    expect(fetch.log.filter((entry) => entry.method === 'GET' && entry.lastEventId !== null).length, 'resumed').toBeGreaterThanOrEqual(1);
  });

  it('is the code the README shows', () => {
    const body = example.slice(example.indexOf('export async function countdown'));
    const shown = /```ts\n([\s\S]*?)```/g;
    const blocks = [...readme.matchAll(shown)].map((match) => match[1]!);
    expect(blocks.some((block) => block.includes(body.slice(0, body.indexOf('\n  // A connection'))))).toBe(true);
  });
});
