import { describe, expect, it } from 'vitest';
import { type ExtensionFamily, needsExtensionMethods } from '../../src/core/extension-methods.ts';

// [family, method, needs]: a family's own methods and the answers that report capabilities need
// its handlers; every other method does not; an unknown method (no Mcp-Method) gets everything.
const CASES: [ExtensionFamily, string | undefined, boolean][] = [
  ['tasks', 'tasks/get', true],
  ['tasks', 'tasks/update', true],
  ['tasks', 'tasks/cancel', true],
  ['tasks', 'tasks/stream', true],
  ['tasks', 'tasks/list', true], // answered -32601 by the SDK either way: it is not registered
  ['tasks', 'server/discover', true],
  ['tasks', 'subscriptions/listen', true],
  ['tasks', 'tools/call', false],
  ['tasks', 'tools/list', false],
  ['tasks', 'resources/read', false],
  ['tasks', 'ping', false],
  ['tasks', 'events/poll', false],
  ['tasks', 'tasksx/get', false],
  ['tasks', undefined, true],
  ['events', 'events/list', true],
  ['events', 'events/poll', true],
  ['events', 'events/stream', true],
  ['events', 'events/subscribe', true],
  ['events', 'events/unsubscribe', true],
  ['events', 'server/discover', true],
  ['events', 'subscriptions/listen', true],
  ['events', 'tools/call', false],
  ['events', 'tasks/get', false],
  ['events', 'eventsx', false],
  ['events', undefined, true],
];

describe('needsExtensionMethods', () => {
  it.each(CASES)('%s for %s: %s', (family, method, needs) => {
    expect(needsExtensionMethods(family, method)).toBe(needs);
  });
});
