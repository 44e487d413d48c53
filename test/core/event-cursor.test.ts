/**
 * The events' cursor (src/core/event-cursor.ts): sealing (a cursor survives its round trip; an
 * altered, made-up, truncated or foreign-keyed one is refused before its payload is read), and
 * the start table (from now, continue, truncated with a fresh position, refused), by named rows
 * and then every small log and cursor against the rules themselves — never a skip without
 * `truncated`, never a position past what the log retains, never another log's position.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import {
  type CursorKeys,
  decideStart,
  decideUpstreamStart,
  decodeCursor,
  type EventCursor,
  importCursorKey,
  type LogState,
  logCursorOf,
  MAX_UPSTREAM_CURSOR_LENGTH,
  type MaxAgeFloor,
  mintCursor,
  mintUpstreamCursor,
  refuseUndecodable,
  type SealedCursor,
  type StartDecision,
  type UpstreamCursor,
  type UpstreamStart,
} from '../../src/core/event-cursor.ts';
import { EventsErrorCode, MAX_CURSOR_LENGTH } from '../../src/core/events-wire.ts';

const SECRET = 'a-test-secret-of-at-least-32-bytes-long!';
const OTHER_SECRET = 'another-secret-of-at-least-32-bytes-long';

let keys: CursorKeys;
let otherKeys: CursorKeys;

beforeAll(async () => {
  keys = { current: await importCursorKey(SECRET) };
  otherKeys = { current: await importCursorKey(OTHER_SECRET) };
});

const at = (next: number, over: Partial<EventCursor> = {}): EventCursor => ({
  type: 'demo.note',
  partition: '',
  logId: 'L1',
  next,
  ...over,
});
const log = (nextSeq: number, earliestSeq: number, over: Partial<LogState> = {}): LogState => ({
  type: 'demo.note',
  partition: '',
  logId: 'L1',
  nextSeq,
  earliestSeq,
  ...over,
});

/** Flip one base64url character of the part `which` (0: payload, 1: mac) at `index`. */
function alter(text: string, which: 0 | 1, index: number): string {
  const parts = text.split('.');
  const part = parts[which]!;
  const c = part[index]!;
  parts[which] = part.slice(0, index) + (c === 'A' ? 'B' : 'A') + part.slice(index + 1);
  return parts.join('.');
}

describe('mintCursor / decodeCursor', () => {
  it.each<{ name: string; cursor: EventCursor }>([
    { name: 'position 0 of an empty log', cursor: at(0) },
    { name: 'a large position', cursor: at(Number.MAX_SAFE_INTEGER) },
    { name: 'a partition', cursor: at(7, { partition: 'tenant-42' }) },
    { name: 'a type name with dots, quotes and non-ASCII', cursor: at(3, { type: 'a."b".ü' }) },
  ])('round trip: $name', async ({ cursor }) => {
    const text = await mintCursor(cursor, keys);
    expect(text).toMatch(/^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]{43}$/);
    expect(await decodeCursor(text, keys)).toEqual({ ok: true, cursor });
  });

  it('a cursor minted under the previous key is accepted while it rotates, and refused after', async () => {
    const text = await mintCursor(at(5), otherKeys);
    expect(await decodeCursor(text, { current: keys.current, previous: otherKeys.current })).toEqual({ ok: true, cursor: at(5) });
    expect(await decodeCursor(text, keys)).toEqual({ ok: false, reason: 'forged_cursor' });
  });

  it('refuses a negative or fractional position at minting', async () => {
    await expect(mintCursor(at(-1), keys)).rejects.toThrow(RangeError);
    await expect(mintCursor(at(1.5), keys)).rejects.toThrow(RangeError);
  });

  it('refuses a key shorter than 32 bytes', async () => {
    await expect(importCursorKey('short')).rejects.toThrow(/at least 32 bytes/);
  });

  it('every single-character change of a real cursor is refused, none decodes to a position', async () => {
    const text = await mintCursor(at(41, { partition: 'p' }), keys);
    const [payload, mac] = text.split('.') as [string, string];
    for (let i = 0; i < payload.length; i++) {
      const decoded = await decodeCursor(alter(text, 0, i), keys);
      expect(decoded.ok, `payload char ${i}`).toBe(false);
    }
    for (let i = 0; i < mac.length; i++) {
      const decoded = await decodeCursor(alter(text, 1, i), keys);
      expect(decoded.ok, `mac char ${i}`).toBe(false);
    }
  });

  it.each<{ name: string; text: (real: string) => string; reason: 'malformed_cursor' | 'forged_cursor' }>([
    { name: 'empty', text: () => '', reason: 'malformed_cursor' },
    { name: 'no dot', text: (real) => real.replace('.', ''), reason: 'malformed_cursor' },
    { name: 'three parts', text: (real) => `${real}.x`, reason: 'malformed_cursor' },
    { name: 'not base64url', text: (real) => real.replace(/^./, '+'), reason: 'malformed_cursor' },
    { name: 'mac cut short', text: (real) => real.slice(0, -2), reason: 'malformed_cursor' },
    { name: 'too long', text: () => 'a'.repeat(MAX_CURSOR_LENGTH + 1), reason: 'malformed_cursor' },
    { name: 'another server’s cursor (another key)', text: () => 'minted-with-other', reason: 'forged_cursor' },
    { name: 'a payload rewritten to seq 0 with the old mac', text: () => 'rewritten', reason: 'forged_cursor' },
    {
      name: 'a second spelling of the mac (its unused low bits set)',
      text: (real) => {
        const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
        const last = alphabet.indexOf(real.at(-1)!);
        return real.slice(0, -1) + alphabet[last ^ 1];
      },
      reason: 'malformed_cursor',
    },
    { name: 'a made-up 32-byte mac', text: (real) => `${real.split('.')[0]}.${'A'.repeat(43)}`, reason: 'forged_cursor' },
  ])('refused: $name', async ({ text, reason }) => {
    const real = await mintCursor(at(9), keys);
    let candidate = text(real);
    if (candidate === 'minted-with-other') candidate = await mintCursor(at(9), otherKeys);
    if (candidate === 'rewritten') {
      const payload = btoa(JSON.stringify([1, 'demo.note', '', 'L1', 0]))
        .replaceAll('+', '-')
        .replaceAll('/', '_')
        .replace(/=+$/, '');
      candidate = `${payload}.${real.split('.')[1]}`;
    }
    expect(await decodeCursor(candidate, keys)).toEqual({ ok: false, reason });
  });

  it('refusals of undecodable cursors are -32602 with their reason', () => {
    for (const reason of ['malformed_cursor', 'forged_cursor'] as const) {
      const { invalid } = refuseUndecodable(reason);
      expect(invalid.code).toBe(EventsErrorCode.InvalidParams);
      expect(invalid.data.reason).toBe(reason);
    }
  });
});

const refusal = (reason: string) =>
  expect.objectContaining({ kind: 'refused', invalid: expect.objectContaining({ code: -32602, data: { reason } }) });

describe('decideStart', () => {
  it.each<{
    name: string;
    cursor: EventCursor | null;
    state: LogState;
    maxAge?: MaxAgeFloor;
    decision: StartDecision | ReturnType<typeof refusal>;
  }>([
    // "Passing cursor: null in any mode means "start from now"... No historical events are replayed."
    { name: 'null: from the head', cursor: null, state: log(10, 0), decision: { kind: 'from_now', fromSeq: 10, truncated: false } },
    { name: 'null on an empty log', cursor: null, state: log(0, 0), decision: { kind: 'from_now', fromSeq: 0, truncated: false } },
    // "maxAgeMs is ignored when cursor is null"
    {
      name: 'null with maxAge: still from the head',
      cursor: null,
      state: log(10, 0),
      maxAge: { floorSeq: 4 },
      decision: { kind: 'from_now', fromSeq: 10, truncated: false },
    },
    // Continue after N.
    {
      name: 'mid-log: continue at its position',
      cursor: at(4),
      state: log(10, 0),
      decision: { kind: 'continue', fromSeq: 4, truncated: false },
    },
    {
      name: 'at the head: continue, nothing yet',
      cursor: at(10),
      state: log(10, 0),
      decision: { kind: 'continue', fromSeq: 10, truncated: false },
    },
    { name: 'at the earliest retained', cursor: at(5), state: log(10, 5), decision: { kind: 'continue', fromSeq: 5, truncated: false } },
    {
      name: 'at the head with everything dropped',
      cursor: at(10),
      state: log(10, 10),
      decision: { kind: 'continue', fromSeq: 10, truncated: false },
    },
    // Behind retention: "the server resets to a position it can serve from ... alongside truncated: true".
    {
      name: 'behind retention: truncated, from the earliest',
      cursor: at(2),
      state: log(10, 5),
      decision: { kind: 'truncated', fromSeq: 5, truncated: true, cause: 'retention' },
    },
    {
      name: 'behind retention, all dropped: truncated, from the head',
      cursor: at(0),
      state: log(10, 10),
      decision: { kind: 'truncated', fromSeq: 10, truncated: true, cause: 'retention' },
    },
    {
      name: 'behind retention with a later maxAge floor: from the floor',
      cursor: at(2),
      state: log(10, 5),
      maxAge: { floorSeq: 8 },
      decision: { kind: 'truncated', fromSeq: 8, truncated: true, cause: 'retention' },
    },
    // "If the floor advances past the cursor, the server SHOULD set truncated: true."
    {
      name: 'maxAge floor past the cursor: truncated, from the floor',
      cursor: at(3),
      state: log(10, 0),
      maxAge: { floorSeq: 7 },
      decision: { kind: 'truncated', fromSeq: 7, truncated: true, cause: 'max_age' },
    },
    {
      name: 'maxAge floor at the head (nothing recent): truncated, from the head',
      cursor: at(3),
      state: log(10, 0),
      maxAge: { floorSeq: 10 },
      decision: { kind: 'truncated', fromSeq: 10, truncated: true, cause: 'max_age' },
    },
    {
      name: 'maxAge floor at the cursor: nothing skipped',
      cursor: at(7),
      state: log(10, 0),
      maxAge: { floorSeq: 7 },
      decision: { kind: 'continue', fromSeq: 7, truncated: false },
    },
    {
      name: 'maxAge floor before the cursor: nothing skipped',
      cursor: at(8),
      state: log(10, 0),
      maxAge: { floorSeq: 2 },
      decision: { kind: 'continue', fromSeq: 8, truncated: false },
    },
    {
      name: 'at the head, maxAge floor at the head',
      cursor: at(10),
      state: log(10, 0),
      maxAge: { floorSeq: 10 },
      decision: { kind: 'continue', fromSeq: 10, truncated: false },
    },
    // A reset log: the old position is never read against the new log.
    {
      name: 'reset log: truncated, from the new log’s earliest',
      cursor: at(4, { logId: 'L0' }),
      state: log(3, 0),
      decision: { kind: 'truncated', fromSeq: 0, truncated: true, cause: 'log_reset' },
    },
    {
      name: 'reset log whose old position is ahead of the new head: still truncated, not refused',
      cursor: at(900, { logId: 'L0' }),
      state: log(3, 1),
      decision: { kind: 'truncated', fromSeq: 1, truncated: true, cause: 'log_reset' },
    },
    {
      name: 'reset log with maxAge: from the floor',
      cursor: at(1, { logId: 'L0' }),
      state: log(9, 0),
      maxAge: { floorSeq: 6 },
      decision: { kind: 'truncated', fromSeq: 6, truncated: true, cause: 'log_reset' },
    },
    {
      name: 'reset log, empty new log',
      cursor: at(5, { logId: 'L0' }),
      state: log(0, 0),
      decision: { kind: 'truncated', fromSeq: 0, truncated: true, cause: 'log_reset' },
    },
    // Refused: not a position in this log.
    { name: 'another type’s cursor', cursor: at(4, { type: 'demo.other' }), state: log(10, 0), decision: refusal('cursor_other_type') },
    {
      name: 'another type’s cursor, even at a valid seq and the same log id',
      cursor: at(0, { type: 'demo.notes' }),
      state: log(0, 0),
      decision: refusal('cursor_other_type'),
    },
    {
      name: 'another partition’s cursor',
      cursor: at(4, { partition: 'p2' }),
      state: log(10, 0, { partition: 'p1' }),
      decision: refusal('cursor_other_log'),
    },
    {
      name: 'unpartitioned cursor on a partition',
      cursor: at(4),
      state: log(10, 0, { partition: 'p1' }),
      decision: refusal('cursor_other_log'),
    },
    { name: 'ahead of the head', cursor: at(11), state: log(10, 0), decision: refusal('cursor_ahead') },
    { name: 'ahead of an empty log', cursor: at(1), state: log(0, 0), decision: refusal('cursor_ahead') },
  ])('$name', ({ cursor, state, maxAge, decision }) => {
    expect(decideStart(cursor, state, maxAge)).toEqual(decision);
  });

  it('refuses an inconsistent log state rather than deciding on it', () => {
    expect(() => decideStart(at(0), log(3, 4))).toThrow(RangeError);
    expect(() => decideStart(at(0), log(3, 0), { floorSeq: 4 })).toThrow(RangeError);
  });

  // Every small log, cursor and floor, against the rules themselves.
  it('for every log of up to 6 occurrences: no silent skip, nothing unretained, nothing before the floor', () => {
    let checked = 0;
    for (let nextSeq = 0; nextSeq <= 6; nextSeq++) {
      for (let earliestSeq = 0; earliestSeq <= nextSeq; earliestSeq++) {
        const floors: (MaxAgeFloor | undefined)[] = [undefined];
        for (let f = earliestSeq; f <= nextSeq; f++) floors.push({ floorSeq: f });
        for (const maxAge of floors) {
          for (const logId of ['L1', 'L0']) {
            for (let next = 0; next <= 8; next++) {
              const decision = decideStart(at(next, { logId }), log(nextSeq, earliestSeq), maxAge);
              checked++;
              if (decision.kind === 'refused') {
                // Only a position this generation never reached is refused.
                expect(logId === 'L1' && next > nextSeq).toBe(true);
                continue;
              }
              const floor = maxAge?.floorSeq ?? earliestSeq;
              // Never starts before what the log retains, nor before the floor asked for.
              expect(decision.fromSeq).toBeGreaterThanOrEqual(floor);
              expect(decision.fromSeq).toBeLessThanOrEqual(nextSeq);
              if (logId === 'L0') {
                expect(decision).toMatchObject({ kind: 'truncated', cause: 'log_reset' });
              } else {
                // Truncated exactly when the start is past the cursor's position: a skip is always said.
                expect(decision.truncated).toBe(decision.fromSeq > next);
                // A continuation starts exactly at the cursor's position.
                if (!decision.truncated) expect(decision.fromSeq).toBe(next);
                expect(next > nextSeq).toBe(false);
              }
            }
          }
        }
      }
    }
    expect(checked).toBeGreaterThan(1000);
  });
});

describe('a minted cursor, decoded and decided', () => {
  it('a cursor minted at the head continues there; the same cursor after a reset is truncated; for another type, refused', async () => {
    const text = await mintCursor(at(10), keys);
    const decoded = await decodeCursor(text, keys);
    if (!decoded.ok) throw new Error('expected a decoded cursor');
    const cursor = logCursorOf(decoded.cursor, 'demo.note');
    if ('invalid' in cursor) throw new Error('expected a log cursor');
    expect(decideStart(cursor, log(12, 0))).toEqual({ kind: 'continue', fromSeq: 10, truncated: false });
    expect(decideStart(cursor, log(2, 0, { logId: 'L2' }))).toMatchObject({ kind: 'truncated', fromSeq: 0, cause: 'log_reset' });
    expect(decideStart(cursor, log(12, 0, { type: 'demo.other' }))).toMatchObject({ kind: 'refused' });
  });
});

const up = (upstream: string, over: Partial<UpstreamCursor> = {}): UpstreamCursor => ({
  type: 'demo.upstream',
  partition: 'f1',
  upstream,
  ...over,
});

describe('the upstream cursor (version 2)', () => {
  it.each<{ name: string; cursor: UpstreamCursor }>([
    { name: 'an opaque position', cursor: up('at:12') },
    { name: 'no partition', cursor: up('evt_01HX', { partition: '' }) },
    { name: 'the longest an author may give, every printable character', cursor: up(' ~"\\.'.padEnd(MAX_UPSTREAM_CURSOR_LENGTH, 'z')) },
  ])('round trip: $name', async ({ cursor }) => {
    const text = await mintUpstreamCursor(cursor, keys);
    expect(await decodeCursor(text, keys)).toEqual({ ok: true, cursor });
  });

  it.each([
    { name: 'empty', upstream: '' },
    { name: 'over the length', upstream: 'a'.repeat(MAX_UPSTREAM_CURSOR_LENGTH + 1) },
    { name: 'a newline', upstream: 'at:1\n' },
    { name: 'non-ASCII', upstream: 'é' },
  ])("an author's cursor that cannot be sealed is refused at minting: $name", async ({ upstream }) => {
    await expect(mintUpstreamCursor(up(upstream), keys)).rejects.toThrow(RangeError);
  });

  it('every single-character change of an upstream cursor is refused', async () => {
    const text = await mintUpstreamCursor(up('at:41'), keys);
    const [payload, mac] = text.split('.') as [string, string];
    for (let i = 0; i < payload.length; i++) expect((await decodeCursor(alter(text, 0, i), keys)).ok, `payload char ${i}`).toBe(false);
    for (let i = 0; i < mac.length; i++) expect((await decodeCursor(alter(text, 1, i), keys)).ok, `mac char ${i}`).toBe(false);
  });
});

describe('decideUpstreamStart', () => {
  const expected = { type: 'demo.upstream', partition: 'f1' };
  it.each<{ name: string; cursor: SealedCursor | null; start: UpstreamStart | ReturnType<typeof refusal> }>([
    // "Passing cursor: null in any mode means "start from now"": the author's read is given null.
    { name: 'null: from now', cursor: null, start: { kind: 'from_now' } },
    {
      name: 'this type and partition: continue after its upstream position',
      cursor: up('at:7'),
      start: { kind: 'continue', upstream: 'at:7' },
    },
    { name: "another upstream type's", cursor: up('at:7', { type: 'demo.other' }), start: refusal('cursor_other_type') },
    { name: "a log-backed type's log cursor", cursor: at(7), start: refusal('cursor_other_type') },
    {
      name: "a log cursor of this type's name (it was log-backed once)",
      cursor: at(7, { type: 'demo.upstream' }),
      start: refusal('cursor_other_log'),
    },
    { name: "another partition's (other arguments)", cursor: up('at:7', { partition: 'f2' }), start: refusal('cursor_other_log') },
    { name: "the type's unpartitioned cursor on a partition", cursor: up('at:7', { partition: '' }), start: refusal('cursor_other_log') },
  ])('$name', ({ cursor, start }) => {
    expect(decideUpstreamStart(cursor, expected)).toEqual(start);
  });
});

describe('logCursorOf', () => {
  it.each<{ name: string; cursor: SealedCursor; answer: EventCursor | { invalid: unknown } }>([
    { name: 'a log cursor goes on to its log (which decides it)', cursor: at(4), answer: at(4) },
    {
      name: "another type's log cursor goes on too (its log refuses it)",
      cursor: at(4, { type: 'demo.other' }),
      answer: at(4, { type: 'demo.other' }),
    },
    {
      name: "an upstream-backed type's cursor",
      cursor: up('at:4'),
      answer: { invalid: expect.objectContaining({ data: { reason: 'cursor_other_type' } }) },
    },
    {
      name: "an upstream cursor of this type's name (it was upstream-backed once)",
      cursor: up('at:4', { type: 'demo.note' }),
      answer: { invalid: expect.objectContaining({ data: { reason: 'cursor_other_log' } }) },
    },
  ])('$name', ({ cursor, answer }) => {
    expect(logCursorOf(cursor, 'demo.note')).toEqual(answer);
  });
});
