// Reconnect backoff bounds: 1 s .. 30 s, doubling, jittered by the injected random number.

import test from 'node:test';
import assert from 'node:assert/strict';
import { reconnectDelayMs, RECONNECT_MIN_MS, RECONNECT_MAX_MS } from '../../src/core/backoff.js';

test('every delay stays within 1 s .. 30 s whatever the random number', () => {
  for (let failures = 0; failures <= 80; failures += 1) {
    for (const random of [0, 0.25, 0.5, 0.999999, 1, -3, 7, NaN]) {
      const delay = reconnectDelayMs(failures, random);
      assert.ok(delay >= RECONNECT_MIN_MS && delay <= RECONNECT_MAX_MS, `${failures}/${random}: ${delay}`);
    }
  }
  assert.equal(RECONNECT_MIN_MS, 1_000);
  assert.equal(RECONNECT_MAX_MS, 30_000);
});

test('the ceiling doubles per failure up to the cap; jitter draws from its upper half', () => {
  assert.equal(reconnectDelayMs(1, 0.999999), 1_000);
  assert.equal(reconnectDelayMs(2, 0), 1_000);
  assert.equal(reconnectDelayMs(2, 0.999999), 2_000);
  assert.equal(reconnectDelayMs(4, 0), 4_000);
  assert.equal(reconnectDelayMs(4, 0.5), 6_000);
  assert.equal(reconnectDelayMs(20, 0), 15_000);
  assert.equal(reconnectDelayMs(20, 0.999999), 30_000);
});
