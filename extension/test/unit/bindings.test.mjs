// The binding table: what is stored leaves transcript text out (spec 000 §23).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createBindings, wireBinding } from '../../src/core/bindings.js';

test('a stored binding never holds the assistant text of its observation block', () => {
  const bindings = createBindings();
  const binding = bindings.bind('wrk-7', 'https://chatgpt.com/c/6a1f', 12);
  binding.observation = { state: 'idle', seq: 4, block: 'status: working\nsummary: secret plans' };
  const stored = bindings.stored();
  assert.deepEqual(Object.keys(stored[0].observation), ['state', 'seq', 'blockDigest']);
  assert.match(stored[0].observation.blockDigest, /^[0-9a-f]{8}$/);
  // Restored, it publishes without the digest (the wire has no such field).
  const restored = createBindings(stored);
  assert.deepEqual(wireBinding(restored.get('wrk-7')).observation, { state: 'idle', seq: 4 });
  assert.ok(!JSON.stringify(stored).includes('secret plans'));
  // The live binding (what is published to the daemon) keeps the block.
  assert.equal(wireBinding(bindings.get('wrk-7')).observation.block, 'status: working\nsummary: secret plans');
});

test('a restored binding keeps its sequence and observation', () => {
  const restored = createBindings([{ workerId: 'wrk-7', conversationUrl: 'https://chatgpt.com/c/6a1f', tabId: null, open: true, seq: 9, observation: { state: 'generating', seq: 9 } }]);
  assert.equal(restored.dropped, 0);
  assert.equal(restored.get('wrk-7').seq, 9);
  assert.deepEqual(restored.get('wrk-7').observation, { state: 'generating', seq: 9 });
  assert.equal(createBindings([{ workerId: 7 }]).dropped, 1, 'a malformed stored binding is dropped, not trusted');
});
