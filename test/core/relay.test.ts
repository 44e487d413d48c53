import { describe, expect, it } from 'vitest';
import { encodeAck, parseAck, parseAttachment, type RelayAttachment } from '../../src/core/relay.ts';

describe('acknowledgements', () => {
  it.each([0, 1, 4_096, Number.MAX_SAFE_INTEGER])('%i survives the round trip', (bytes) => {
    expect(parseAck(encodeAck(bytes))).toBe(bytes);
  });

  it.each<{ name: string; message: string | ArrayBuffer }>([
    { name: 'a binary message', message: new TextEncoder().encode('ack 1').buffer as ArrayBuffer },
    { name: 'no count', message: 'ack ' },
    { name: 'a negative count', message: 'ack -1' },
    { name: 'a fraction', message: 'ack 1.5' },
    { name: 'a leading zero', message: 'ack 01' },
    { name: 'past the safe integers', message: 'ack 9007199254740993' },
    { name: 'padding', message: ' ack 1' },
    { name: 'a trailing line break', message: 'ack 1\n' },
    { name: 'another verb', message: 'nack 1' },
  ])('$name is not an ack', ({ message }) => {
    expect(parseAck(message)).toBeUndefined();
  });
});

describe('attachments', () => {
  const valid: RelayAttachment = {
    stream: 3,
    epoch: 2,
    position: 10,
    bridge: 0,
    sent: 4_000,
    acked: 1_000,
    behind: false,
    finishing: false,
    attachedAt: 1_764_600_000_000,
  };

  it('what a connection records is read back as it was', () => {
    expect(parseAttachment(structuredClone(valid))).toEqual(valid);
  });

  it.each<{ name: string; value: unknown }>([
    { name: 'nothing (a socket this code did not accept)', value: null },
    { name: 'a string', value: 'stream:3' },
    { name: 'a missing number', value: { ...valid, position: undefined } },
    { name: 'a negative number', value: { ...valid, sent: -1 } },
    { name: 'a fraction', value: { ...valid, stream: 1.5 } },
    { name: 'a number as text', value: { ...valid, epoch: '2' } },
    { name: 'a flag that is not a boolean', value: { ...valid, behind: 0 } },
    { name: 'more acknowledged than sent', value: { ...valid, acked: 5_000 } },
  ])('$name is refused', ({ value }) => {
    expect(parseAttachment(value)).toBeUndefined();
  });
});
