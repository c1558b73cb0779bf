// The per-worker serial queue with a concurrency limit.

import test from 'node:test';
import assert from 'node:assert/strict';
import { createWorkQueue } from '../../src/core/queue.js';

test('one command per worker at a time, in arrival order', () => {
  const queue = createWorkQueue();
  queue.enqueue('wrk-1', 'cmd-1');
  queue.enqueue('wrk-1', 'cmd-2');
  assert.deepEqual(queue.startNext(4), [{ workerId: 'wrk-1', commandId: 'cmd-1' }]);
  assert.deepEqual(queue.startNext(4), []);
  queue.finish('wrk-1');
  assert.deepEqual(queue.startNext(4), [{ workerId: 'wrk-1', commandId: 'cmd-2' }]);
});

test('unrelated workers run concurrently up to the limit; the earliest arrival starts first', () => {
  const queue = createWorkQueue();
  for (const [w, c] of [['wrk-3', 'cmd-1'], ['wrk-1', 'cmd-2'], ['wrk-2', 'cmd-3'], ['wrk-4', 'cmd-4']]) queue.enqueue(w, c);
  assert.deepEqual(queue.startNext(2).map((s) => s.commandId), ['cmd-1', 'cmd-2']);
  assert.equal(queue.activeCount, 2);
  queue.finish('wrk-1');
  assert.deepEqual(queue.startNext(2).map((s) => s.commandId), ['cmd-3']);
  assert.deepEqual(queue.startNext(2), []);
});

test('a waiting command can be withdrawn; an active one cannot', () => {
  const queue = createWorkQueue();
  queue.enqueue('wrk-1', 'cmd-1');
  queue.enqueue('wrk-1', 'cmd-2');
  queue.startNext(1);
  assert.equal(queue.withdraw('cmd-1'), false);
  assert.equal(queue.withdraw('cmd-2'), true);
  assert.equal(queue.waitingCount('wrk-1'), 0);
  assert.equal(queue.activeCommand('wrk-1'), 'cmd-1');
});
