// A CLI worker's approval request (`executor-cli --approvals ask`) in the views: the Needs you
// row says what is asked and carries the `approval_answer` actions of its Approve and Decline
// buttons; a ChatGPT card (no `hold.approval`) keeps its words and gets no buttons.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { approvalRequestView, workerRow, dashboardView } from '../../src/ui/view.js';
import { approvalNotifications } from '../../src/ui/notices.js';

const codexWorker = (hold) => ({
  workerId: 'wrk-21', name: '/root/app', displayName: 'App', attempts: 2, autoResumes: 1, autoResume: true,
  policySource: 'run_default', pauseAfterTurn: false, stall: 'clear', disposition: 'awaiting_human',
  conversationState: 'awaiting_approval', executorKind: 'codex', conversationUrl: 'codex:thread/019a',
  workspace: { directory: '/home/me/src/app', branch: null }, hold,
});
const APPROVAL = { id: 'apr-3', kind: 'command', summary: 'run cargo publish --dry-run (in /home/me/src/app)' };

test('a CLI approval request is shown with what is asked and answers that very request', () => {
  const w = codexWorker({ reason: 'awaiting_approval', detail: APPROVAL.summary, approval: APPROVAL });
  const view = approvalRequestView(w);
  assert.equal(view.text, 'Codex CLI asks to run cargo publish --dry-run (in /home/me/src/app). Approve or decline it here; the session waits meanwhile.');
  assert.deepEqual(view.approve, { action: 'approval_answer', workerId: 'wrk-21', approvalId: 'apr-3', decision: 'approve' });
  assert.deepEqual(view.decline, { action: 'approval_answer', workerId: 'wrk-21', approvalId: 'apr-3', decision: 'decline' });
  const row = workerRow(w, { runId: 'run-1', taskName: 'T' }, 0);
  assert.equal(row.status.key, 'needs_you');
  assert.equal(row.needsYou, view.text);
  assert.equal(row.approval.id, 'apr-3');
  assert.equal(row.answerable, false, 'no free-text answer box');
});

test('a ChatGPT card has no request to answer here: no buttons, its own words', () => {
  const w = { ...codexWorker({ reason: 'awaiting_approval', detail: 'Orchestrator' }), executorKind: undefined, conversationUrl: 'https://chatgpt.com/c/1' };
  assert.equal(approvalRequestView(w), null);
  const row = workerRow(w, null, 0);
  assert.equal(row.approval, null);
  assert.match(row.needsYou, /approve Orchestrator in this conversation/);
});

test('a request without an id, or a worker not held, offers nothing', () => {
  assert.equal(approvalRequestView(codexWorker({ reason: 'awaiting_approval', approval: { kind: 'command', summary: 'x' } })), null);
  assert.equal(approvalRequestView(codexWorker({ reason: 'blocked_by_dialog', approval: APPROVAL })), null);
  assert.equal(approvalRequestView(codexWorker(undefined)), null);
});

test('the dashboard lists the request under Needs you', () => {
  const w = codexWorker({ reason: 'awaiting_approval', detail: APPROVAL.summary, approval: APPROVAL });
  const summary = { runs: [{ runId: 'run-1', taskName: 'T', status: 'active', autoResume: true, workers: [w] }] };
  const view = dashboardView({ summary, connection: { status: 'live' } }, 0);
  assert.equal(view.needsYou.length, 1);
  assert.equal(view.needsYou[0].approval.approve.approvalId, 'apr-3');
});

test('the notification of a CLI request says what is asked and where to answer it', () => {
  const w = codexWorker({ reason: 'awaiting_approval', detail: APPROVAL.summary, approval: APPROVAL });
  const { show } = approvalNotifications({ runs: [{ workers: [w] }] }, new Set());
  assert.equal(show.length, 1);
  assert.equal(show[0].title, 'Needs you: approve or decline a request');
  assert.equal(show[0].message, 'App asks to run cargo publish --dry-run (in /home/me/src/app). Answer it under Needs you on the dashboard.');
});
