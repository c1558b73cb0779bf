// Unit tests of the popup's Start a run here / Attach offer (src/ui/start-view.js): when
// it is offered, which workers a tab can be attached to (orphaned first, finished never),
// the confirmation naming the worker, and the start request a filled form becomes.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { attachConfirm, NAME_CHARS_MAX, startHereView, startRequest } from '../../src/ui/start-view.js';

const worker = (over) => ({ workerId: 'wrk-2', name: '/root/parser', displayName: 'Parser', disposition: 'running', attempts: 2, autoResume: true, stall: 'clear', conversationUrl: 'https://chatgpt.com/c/2', ...over });
const summary = { runs: [{ runId: 'run-1', taskName: 'CSV export', workers: [
  worker({}),
  worker({ workerId: 'wrk-1', name: '/root', displayName: 'CSV root', disposition: 'awaiting_execution', conversationState: 'closed', conversationUrl: 'https://chatgpt.com/c/1' }),
  worker({ workerId: 'wrk-3', name: '/root/done', displayName: 'Done', disposition: 'completed' }),
] }] };
const state = (chatTabs, tabs = {}, status = 'live') => ({ connection: { status }, summary, tabs, chatTabs });

test('offered only on a ChatGPT tab the extension reads and does not manage', () => {
  assert.equal(startHereView(state({}), 4), null, 'not a ChatGPT tab');
  assert.equal(startHereView(state({ 4: { conversation: true } }, { 4: 'wrk-2' }), 4), null, 'managed already');
  assert.equal(startHereView(state({ 4: { conversation: true } }), null), null, 'no active tab');
  const offer = startHereView(state({ 4: { conversation: true } }), 4);
  assert.equal(offer.tabId, 4);
  assert.equal(offer.live, true);
  assert.equal(startHereView(state({ 4: { conversation: true } }, {}, 'offline'), 4).live, false);
});

test('attach lists unfinished workers, the orphaned root first; a new chat offers none', () => {
  const offer = startHereView(state({ 4: { conversation: true } }), 4);
  assert.deepEqual(offer.attachable.map((w) => [w.workerId, w.withoutConversation]), [['wrk-1', true], ['wrk-2', false]]);
  assert.equal(offer.attachable[0].label, 'CSV root (/root) · no conversation');
  const fresh = startHereView(state({ 4: { conversation: false } }), 4);
  assert.equal(fresh.newChat, true);
  assert.deepEqual(fresh.attachable, []);
  assert.match(fresh.attachText, /new chat|conversation/);
  assert.match(fresh.startText, /new chat/);
});

test('the attach confirmation names the worker and its run', () => {
  const [orphan, busy] = startHereView(state({ 4: { conversation: true } }), 4).attachable;
  const c = attachConfirm(orphan);
  assert.equal(c.title, 'Attach this conversation to CSV root?');
  assert.match(c.body, /CSV root \(CSV export\) continues in this conversation/);
  assert.equal(c.reason, false);
  assert.match(attachConfirm(busy).body, /leaves its current conversation/);
});

test('a filled form becomes run_start; missing or long names are refused', () => {
  assert.deepEqual(startRequest({ taskName: ' CSV export ', rootConversationName: '', context: ' plan ', autoResume: false }, 4), {
    action: 'run_start', tabId: 4, taskName: 'CSV export', rootConversationName: 'CSV export root', context: 'plan', autoResume: false, deadMan: 'recover',
  });
  assert.equal(startRequest({ taskName: 'T', deadMan: 'notify' }, 4).deadMan, 'notify');
  assert.equal(startRequest({ taskName: 'T', deadMan: 'sometimes' }, 4).deadMan, 'recover', 'an unknown choice falls back to the default');
  assert.equal(startRequest({ taskName: 'T' }, 4).autoResume, true, 'Auto Resume on unless switched off');
  assert.match(startRequest({ taskName: '  ' }, 4).error, /task name/);
  assert.match(startRequest({ taskName: 'x'.repeat(NAME_CHARS_MAX + 1) }, 4).error, /at most/);
});
