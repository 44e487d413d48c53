// node --test bench/harness/*.test.mjs  — the statistics behind the table.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { median, percentile } from './stats.mjs';

test('percentile is nearest-rank over the finite values', () => {
  const values = Array.from({ length: 300 }, (_, i) => 300 - i); // 300..1, unsorted
  assert.equal(percentile(values, 50), 150);
  assert.equal(percentile(values, 99), 297);
  assert.equal(percentile([5, NaN, null, 1], 100), 5);
  assert.equal(percentile([], 50), undefined);
});

test('median averages the two middle values of an even count', () => {
  assert.equal(median([3, 1, 2]), 2);
  assert.equal(median([4, 1, 3, 2]), 2.5);
  assert.equal(median([null, undefined]), undefined);
});
