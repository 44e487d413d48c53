/**
 * The library's log lines, as a test reads them: each JSON line written to `console.log`
 * (`out`) or `console.error` (`err`) during a test, parsed, with the stream it went to; any
 * other console output is dropped (it is not one of the library's lines). The console is
 * restored after each test.
 */
import { afterEach, beforeEach, vi } from 'vitest';

export interface LogLine {
  stream: 'out' | 'err';
  line: Record<string, unknown>;
}

/** Captures, for each test of the calling scope, the lines logged during it; returns a reader of the current test's. */
export function captureLogLines(): () => LogLine[] {
  let lines: LogLine[] = [];
  beforeEach(() => {
    lines = [];
    const capture = (stream: LogLine['stream']) => (text: unknown) => {
      try {
        lines.push({ stream, line: JSON.parse(String(text)) as Record<string, unknown> });
      } catch {
        // Not one of the library's lines.
      }
    };
    vi.spyOn(console, 'log').mockImplementation(capture('out'));
    vi.spyOn(console, 'error').mockImplementation(capture('err'));
  });
  afterEach(() => {
    vi.restoreAllMocks();
  });
  return () => lines;
}
