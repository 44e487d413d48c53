import { describe, expect, it } from 'vitest';
import { eraOfHeader } from '../../src/core/era.ts';

describe('eraOfHeader: what MCP-Protocol-Version alone decides', () => {
  it.each<[string | null, 'modern' | 'legacy' | undefined]>([
    ['2026-07-28', 'modern'],
    [' 2026-07-28 ', 'modern'],
    ['2025-11-25', 'legacy'],
    ['2025-06-18', 'legacy'],
    ['2025-03-26', 'legacy'],
    // The body decides: no header (an initialize, a modern claim sent without it), a revision
    // nobody serves (the SDK answers -32022 to a modern claim naming it), or noise.
    [null, undefined],
    ['2024-11-05', undefined],
    ['2099-01-01', undefined],
    ['', undefined],
    ['2026-07-28, 2025-11-25', undefined],
  ])('%j → %s', (header, era) => {
    expect(eraOfHeader(header)).toBe(era);
  });
});
