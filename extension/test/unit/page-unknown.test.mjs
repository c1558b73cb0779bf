// A managed page the adapter does not recognize (issue 27), on the extension's pure side: the
// executor publishes `unknown` with its reason once, keeps the queued command waiting (nothing
// is typed) and lets it through once the page is known again; the surfaces say "Page not
// recognized: <reason>" as Needs you with Copy page shape, and one notification is raised per
// episode.
import test from 'node:test';
import assert from 'node:assert/strict';
import { classify } from '../../src/core/classify.js';
import { decideDelivery } from '../../src/core/delivery.js';
import { unknownPageNotifications } from '../../src/ui/notices.js';
import { dashboardView, overlayView, popupView, workerRow, withPageNotes } from '../../src/ui/view.js';
import { Rig, CONVERSATION, idleFacts, generatingFacts, sent, toPage } from './executor-harness.mjs';

const FORM = { where: 'latest turn', what: 'form (3 buttons)' };
const DETAIL = 'Page not recognized: form (3 buttons) in the latest turn';
const NOW = 1_764_466_100_000;
const worker = (over = {}) => ({ workerId: 'wrk-7', name: '/root/lane', displayName: 'Lane', attempts: 2, autoResumes: 1, autoResume: true,
  policySource: 'run_default', disposition: 'running', conversationState: 'unknown', ...over });
const summary = (w = worker()) => ({ runs: [{ runId: 'run-1', taskName: 'Beds', status: 'active', autoResume: true, workers: [w] }] });

function managedRig() {
  const rig = new Rig({ stored: { bindings: [{ workerId: 'wrk-7', conversationUrl: CONVERSATION, tabId: 5, open: true, seq: 40, observation: { state: 'idle', seq: 40 } }] }, openTabs: [{ tabId: 5, url: CONVERSATION }] });
  rig.connect();
  return rig;
}

test('a queued send waits on an unrecognized page, nothing is typed; it goes once the page is known again', () => {
  const page = (facts) => ({ connected: true, facts, classification: classify(facts) });
  assert.deepEqual(decideDelivery('conversation.send', page(idleFacts({ unrecognized: FORM }))), { action: 'wait' });
  assert.deepEqual(decideDelivery('conversation.send', page(idleFacts({ unrecognized: { ...FORM, settling: true } }))), { action: 'wait' });
  assert.equal(decideDelivery('conversation.steer', page(generatingFacts({ unrecognized: FORM }))).action, 'wait');
  const rig = managedRig();
  const published = sent(rig.hello(5, idleFacts({ unrecognized: FORM })), 'conversation.state');
  assert.deepEqual(published.map((m) => [m.state, m.detail]), [['unknown', DETAIL]]);
  const effects = rig.command();
  assert.equal(toPage(effects, 'submit').length, 0, 'nothing is typed beside what the adapter cannot name');
  assert.equal(toPage(rig.page(5, idleFacts({ unrecognized: FORM, userTurns: 2 })), 'submit').length, 0, 'still nothing');
  const known = rig.page(5, idleFacts());
  assert.equal(toPage(known, 'submit').length, 1, 'the page known again: the queued send goes, once');
  assert.deepEqual(sent(known, 'conversation.state').map((m) => m.state), ['idle']);
});

test('the page-not-recognized reason reaches ui.state and the overlay, and goes away with it', () => {
  const rig = managedRig();
  const hello = rig.hello(5, idleFacts({ unrecognized: FORM }));
  assert.deepEqual(rig.executor.uiState().unknownPages, { 'wrk-7': DETAIL });
  assert.ok(hello.some((e) => e.kind === 'uiChanged'));
  assert.ok(hello.some((e) => e.kind === 'overlay' && e.pageUnknown === DETAIL));
  const settling = rig.page(5, idleFacts({ unrecognized: { ...FORM, settling: true } }));
  assert.deepEqual(rig.executor.uiState().unknownPages, {}, 'settling: not yet a reason to tell anyone');
  assert.ok(settling.some((e) => e.kind === 'overlay' && e.pageUnknown === null));
  rig.page(5, idleFacts({ unrecognized: FORM }));
  const known = rig.page(5, idleFacts());
  assert.deepEqual(rig.executor.uiState().unknownPages, {});
  assert.ok(known.some((e) => e.kind === 'uiChanged'));
});

test('the surfaces: Needs you, "Page not recognized: <reason>", Copy page shape', () => {
  const notes = { 'wrk-7': DETAIL };
  const row = workerRow(withPageNotes(summary(), notes).runs[0].workers[0], null, NOW);
  assert.equal(row.status.key, 'needs_you');
  assert.equal(row.status.note, 'Page not recognized');
  assert.match(row.needsYou, /^Page not recognized: form \(3 buttons\) in the latest turn\. Nothing is typed there/);
  assert.equal(row.pageShape?.label, 'Copy page shape');
  const state = { connection: { status: 'live' }, summary: summary(), tabs: {}, unknownPages: notes };
  assert.equal(popupView(state, 'wrk-7', NOW).current.status.key, 'needs_you');
  assert.deepEqual(dashboardView(state, NOW).needsYou.map((r) => r.workerId), ['wrk-7']);
  const overlay = overlayView(worker(), { status: 'live' }, { state: 'unknown', detail: DETAIL }, NOW);
  assert.equal(overlay.status.key, 'needs_you');
  assert.deepEqual([overlay.pageShape.offered, overlay.pageShape.note], [true, DETAIL]);
  // A finished worker's page says nothing; without a note the row is as before.
  assert.equal(workerRow({ ...worker({ disposition: 'completed' }), pageUnknown: DETAIL }, null, NOW).status.key, 'complete');
  assert.equal(workerRow(worker(), null, NOW).status.key, 'resuming');
  assert.equal(overlayView(worker(), { status: 'live' }, null, NOW).pageShape.offered, false);
});

test('one notification per episode of a page not recognized, cleared when it is recognized again', () => {
  const shown = new Set();
  const first = unknownPageNotifications({ 'wrk-7': DETAIL }, summary(), shown);
  assert.deepEqual(first.show.map((n) => [n.id, n.title]), [['orc-page-unknown:wrk-7', 'Needs you: ChatGPT page not recognized']]);
  assert.match(first.show[0].message, /^Lane: Page not recognized: form \(3 buttons\) in the latest turn\. Nothing is typed there/);
  first.show.forEach((n) => shown.add(n.id));
  assert.deepEqual(unknownPageNotifications({ 'wrk-7': DETAIL }, summary(), shown), { show: [], clear: [] }, 'once per episode');
  assert.deepEqual(unknownPageNotifications({}, summary(), shown), { show: [], clear: ['orc-page-unknown:wrk-7'] });
  shown.delete('orc-page-unknown:wrk-7');
  assert.equal(unknownPageNotifications({ 'wrk-7': DETAIL }, summary(), shown).show.length, 1, 'a later episode notifies again');
  shown.add('orc-approval:wrk-7');
  assert.deepEqual(unknownPageNotifications({}, summary(), shown).clear, [], 'approval notices are not its to clear');
});

test("the daemon's hold on a page not recognized reads as the extension's own: Needs you, the reason, Copy page shape", () => {
  // Another browser's page, or this one's before its own note arrives: the summary's hold.
  const held = worker({ disposition: 'awaiting_human', conversationState: 'unrecognized', hold: { reason: 'page_unrecognized', sinceMs: NOW - 60_000, detail: DETAIL } });
  const row = workerRow(held, null, NOW);
  assert.equal(row.status.key, 'needs_you');
  assert.equal(row.status.note, 'Page not recognized');
  assert.match(row.needsYou, /^Page not recognized: form \(3 buttons\) in the latest turn\. Nothing is typed there/);
  assert.equal(row.pageShape?.label, 'Copy page shape');
  // Without the executor's words the hold still says what it is.
  const bare = workerRow(worker({ disposition: 'awaiting_human', hold: { reason: 'page_unrecognized', sinceMs: NOW } }), null, NOW);
  assert.match(bare.needsYou, /^Page not recognized\. Nothing is typed there/);
});
