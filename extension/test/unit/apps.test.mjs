// The orchestrator's ChatGPT app on the extension's pure side (issue 17): the approval card and
// the lost app as page states, their protocol values, the app settings, what the surfaces say
// (docs/protocol/fixtures/daemon.operator.summary.apps.json), and the approval notifications.

import test from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { classify } from '../../src/core/classify.js';
import { nextObservation } from '../../src/core/coalesce.js';
import { decideDelivery } from '../../src/core/delivery.js';
import { decodeExecutorMessage, encodeMessage, STATE_NAMES, ERROR_KINDS, FAILURE_CODES } from '../../src/core/protocol.js';
import { submitRequest } from '../../src/core/page-messages.js';
import { mergeSettings, appOf, appSelectionView, SETTINGS_DEFAULTS } from '../../src/core/settings.js';
import { workerRow, overlayView, blockReason, approvalNotifications, workerActions } from '../../src/ui/view.js';
import { facts, idleFacts, generatingFacts } from './executor-harness.mjs';

const FIXTURES = new URL('../../../docs/protocol/fixtures/', import.meta.url);
const fixture = (name) => readFileSync(new URL(name, FIXTURES), 'utf8').trim();
const card = { app: 'Orchestrator', title: 'Allow ChatGPT to use Orchestrator?', buttons: ['Deny', 'Allow once'] };
const FORBIDDEN = 'FORBIDDEN: This conversation does not support developer MCPs';

test('an approval card is awaiting_approval with the app as detail, with or without a Stop control, before an error card', () => {
  for (const base of [generatingFacts(), idleFacts(), facts({ userTurns: 1, assistantTurns: 1 }), idleFacts({ error: { kind: 'something_went_wrong', text: 'x' } })]) {
    assert.deepEqual(classify({ ...base, approval: card }), { state: 'awaiting_approval', detail: 'Orchestrator' });
  }
  assert.deepEqual(classify(idleFacts({ approval: { app: null, title: null, buttons: [] } })), { state: 'awaiting_approval' });
  assert.deepEqual(classify(idleFacts({ approval: { app: null, title: 'Permitir que o ChatGPT use X?', buttons: [] } })),
    { state: 'awaiting_approval', detail: 'Permitir que o ChatGPT use X?' });
  // What stops the whole account comes first; a card is no unknown dialog.
  assert.equal(classify(idleFacts({ approval: card, rateLimited: { text: 'Too many requests' } })).errorKind, 'rate_limited');
  assert.deepEqual(classify(idleFacts({ approval: card, dialog: { heading: 'Temporary Chat' } })).state, 'awaiting_approval');
});

test('a lost app is error app_unavailable with the tool error as detail; a send waits, nothing is typed over it', () => {
  const lost = classify(idleFacts({ error: { kind: 'app_unavailable', text: FORBIDDEN, retry: false } }));
  assert.deepEqual(lost, { state: 'error', errorKind: 'app_unavailable', detail: FORBIDDEN });
  const page = (f) => ({ connected: true, facts: f, classification: classify(f) });
  assert.equal(decideDelivery('conversation.send', page(idleFacts({ error: { kind: 'app_unavailable', text: FORBIDDEN } }))).action, 'wait');
  assert.equal(decideDelivery('conversation.send', page(idleFacts({ approval: card }))).action, 'wait');
  assert.equal(decideDelivery('conversation.send', page(generatingFacts({ approval: card }))).action, 'wait');
  assert.equal(decideDelivery('conversation.steer', page(generatingFacts({ approval: card }))).action, 'fail');
});

test('the approval state is published with its app, once per change', () => {
  const first = nextObservation({ state: 'generating', seq: 4 }, 4, { state: 'awaiting_approval', detail: 'Orchestrator' });
  assert.deepEqual(first, { state: 'awaiting_approval', seq: 5, detail: 'Orchestrator' });
  assert.equal(nextObservation(first, 5, { state: 'awaiting_approval', detail: 'Orchestrator' }), null);
  assert.deepEqual(nextObservation(first, 5, { state: 'generating' }), { state: 'generating', seq: 6 });
});

test('protocol: the new state, error kind and failure code round-trip byte for byte through the golden fixtures', () => {
  assert.ok(STATE_NAMES.includes('awaiting_approval'));
  assert.ok(ERROR_KINDS.includes('app_unavailable'));
  assert.equal(FAILURE_CODES.APP_NOT_SELECTED, 'APP_NOT_SELECTED');
  for (const name of ['executor.conversation.state.awaiting_approval.json', 'executor.conversation.state.app_unavailable.json',
    'executor.command.result.failed.app_not_selected.json']) {
    const text = fixture(name);
    assert.equal(encodeMessage(decodeExecutorMessage(text)), text, name);
  }
  assert.equal(decodeExecutorMessage(fixture('executor.conversation.state.awaiting_approval.json')).detail, 'Orchestrator');
});

test('settings: no app by default (selection off, with a warning); a name and an optional description, one line each', () => {
  assert.equal(SETTINGS_DEFAULTS.appName, '');
  assert.equal(appOf(SETTINGS_DEFAULTS), null);
  assert.equal(appSelectionView(SETTINGS_DEFAULTS).on, false);
  assert.match(appSelectionView(SETTINGS_DEFAULTS).text, /cannot call the orchestrator's tools/);
  const { settings, errors } = mergeSettings({}, { appName: '  Orchestrator ', appDescription: 'Durable workers across ChatGPT turns' });
  assert.deepEqual(errors, {});
  assert.deepEqual(appOf(settings), { name: 'Orchestrator', description: 'Durable workers across ChatGPT turns' });
  assert.match(appSelectionView(settings).text, /Chooses Orchestrator/);
  for (const bad of [{ appName: '@Orchestrator' }, { appName: 'a\nb' }, { appName: 'x'.repeat(81) }, { appName: 7 }, { appDescription: 'x'.repeat(201) }, { appDescription: 'tab\there' }]) {
    const merged = mergeSettings(settings, bad);
    assert.equal(Object.keys(merged.errors).length, 1, JSON.stringify(bad));
    assert.equal(merged.settings.appName, 'Orchestrator', 'a rejected field keeps its old value');
  }
  assert.equal(mergeSettings(settings, { appName: '' }).settings.appName, '', 'clearing the name turns selection off');
});

test('submit carries the app only when one is set', () => {
  assert.equal('app' in submitRequest('r', 't', 'n', 'idle'), false);
  assert.deepEqual(submitRequest('r', 't', 'n', 'idle', { name: 'Orchestrator', description: '' }).app, { name: 'Orchestrator', description: '' });
});

const apps = JSON.parse(fixture('daemon.operator.summary.apps.json'));
const [approving, lost, notSelected] = apps.runs[0].workers;
const NOW = 1767280300000;

test('surfaces: an approval hold is Needs you: approve <App> in this conversation, no answer box, opened in the tab', () => {
  const row = workerRow(approving, apps.runs[0], NOW);
  assert.equal(row.status.key, 'needs_you');
  assert.equal(row.needsYou, 'approve Orchestrator in this conversation');
  assert.equal(row.blockReason, 'Needs you: approve Orchestrator in this conversation');
  assert.equal(row.answerable, false);
  assert.equal(row.hold.reason, 'awaiting_approval');
  assert.equal(row.conversationUrl, 'https://chatgpt.com/c/6a1f');
  assert.equal(overlayView(approving, { status: 'live' }, null, NOW).needsYou, 'approve Orchestrator in this conversation');
  assert.equal(workerRow({ ...approving, hold: { reason: 'awaiting_approval' } }, null, NOW).needsYou, 'approve the app in this conversation');
});

test('surfaces: the two app pauses say what to do', () => {
  const lostRow = workerRow(lost, apps.runs[0], NOW);
  assert.equal(lostRow.status.key, 'paused');
  assert.equal(lostRow.status.note, 'The conversation lost the app: recover into a new conversation');
  assert.match(blockReason(lost, NOW), /^Paused: ChatGPT no longer lets this conversation use/);
  assert.deepEqual(workerActions(lost).map((a) => a.key), ['continue_anyway', 'resume', 'stop_worker']);
  const notSelectedRow = workerRow(notSelected, apps.runs[0], NOW);
  assert.equal(notSelectedRow.status.note, 'The app could not be chosen: check its name in Settings, then resume');
  assert.match(notSelectedRow.blockReason, /did not show the app 'Orchestrator'/);
});

test('notifications: one per worker entering an approval hold, cleared when it lifts', () => {
  const shown = new Set();
  const first = approvalNotifications(apps, shown);
  assert.deepEqual(first.show.map((n) => n.id), ['orc-approval:wrk-7']);
  assert.equal(first.show[0].title, 'Needs you: approve Orchestrator');
  assert.match(first.show[0].message, /^Importer root: approve Orchestrator in this conversation/);
  assert.deepEqual(first.clear, []);
  shown.add('orc-approval:wrk-7');
  assert.deepEqual(approvalNotifications(apps, shown), { show: [], clear: [] }, 'shown once while the hold lasts');
  const lifted = { runs: [{ ...apps.runs[0], workers: [{ ...approving, hold: undefined, disposition: 'running' }] }] };
  assert.deepEqual(approvalNotifications(lifted, shown), { show: [], clear: ['orc-approval:wrk-7'] });
  assert.deepEqual(approvalNotifications(null, new Set()), { show: [], clear: [] });
});
