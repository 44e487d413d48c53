import { describe, expect, it } from 'vitest';
import {
  acceptsBatches,
  ASSUMED_PROTOCOL_VERSION,
  isSupportedProtocolVersion,
  sendsPrimingEvent,
  SUPPORTED_PROTOCOL_VERSIONS,
  type ProtocolVersion,
} from '../../src/core/protocol-version.ts';

describe('protocol versions', () => {
  it('supports exactly the three sessionful revisions, newest first', () => {
    expect(SUPPORTED_PROTOCOL_VERSIONS).toEqual(['2025-11-25', '2025-06-18', '2025-03-26']);
  });

  it('assumes 2025-03-26 when no version header is sent', () => {
    expect(ASSUMED_PROTOCOL_VERSION).toBe('2025-03-26');
    expect(isSupportedProtocolVersion(ASSUMED_PROTOCOL_VERSION)).toBe(true);
  });

  it.each([{ value: '2025-11-25' }, { value: '2025-06-18' }, { value: '2025-03-26' }])('supports $value', ({ value }) => {
    expect(isSupportedProtocolVersion(value)).toBe(true);
  });

  it.each([
    { name: 'the pre-Streamable-HTTP 2024-11-05', value: '2024-11-05' },
    { name: 'the sessionless 2026-07-28', value: '2026-07-28' },
    { name: 'the empty string', value: '' },
    { name: 'a version with a leading space', value: ' 2025-06-18' },
    { name: 'a version with a trailing space', value: '2025-06-18 ' },
    { name: 'a differently formatted date', value: '2025/06/18' },
    { name: 'a list of versions', value: '2025-06-18, 2025-03-26' },
    { name: 'an arbitrary word', value: 'latest' },
  ])('does not support $name', ({ value }) => {
    expect(isSupportedProtocolVersion(value)).toBe(false);
  });

  it.each<{ version: ProtocolVersion; priming: boolean; batches: boolean }>([
    { version: '2025-11-25', priming: true, batches: false },
    { version: '2025-06-18', priming: false, batches: false },
    { version: '2025-03-26', priming: false, batches: true },
  ])('a $version session sends priming events: $priming, accepts batches: $batches', ({ version, priming, batches }) => {
    expect(sendsPrimingEvent(version)).toBe(priming);
    expect(acceptsBatches(version)).toBe(batches);
  });
});
