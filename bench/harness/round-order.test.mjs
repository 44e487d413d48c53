import assert from 'node:assert/strict';
import { test } from 'node:test';
import { roundOrder } from './round-order.mjs';

test('each round visits every peer once', () => {
  for (const n of [1, 2, 3, 9]) {
    for (let i = -50; i < 50; i++)
      assert.deepEqual(
        [...roundOrder(i, n)].sort((a, b) => a - b),
        Array.from({ length: n }, (_, k) => k),
      );
  }
});

test('a round is the same every time it is asked for: a run is repeatable', () => {
  for (let i = -5; i < 5; i++) assert.deepEqual(roundOrder(i, 9), roundOrder(i, 9));
});

test('who goes before whom is spread evenly: no peer always follows the same one', () => {
  const n = 9;
  const rounds = 9_000;
  const follows = Array.from({ length: n }, () => new Array(n).fill(0));
  let previous;
  for (let i = 0; i < rounds; i++) {
    for (const peer of roundOrder(i, n)) {
      if (previous !== undefined && previous !== peer) follows[peer][previous]++;
      previous = peer;
    }
  }
  // Each peer is preceded by each other about rounds × n / (n − 1) / (n − 1) ≈ 1,266 times; a fixed
  // rotation gives one predecessor ~9,000 and the rest ~0.
  for (let peer = 0; peer < n; peer++) {
    for (let before = 0; before < n; before++) {
      if (before === peer) continue;
      assert.ok(follows[peer][before] > 1_000 && follows[peer][before] < 1_550, `${before} → ${peer}: ${follows[peer][before]}`);
    }
  }
});
