// The toolbar popup, the primary operator surface (spec 000 §17.2): connection, Auto
// Resume per run, counts, the active workers, the current tab's worker with Pause and
// Continue now, and links to the dashboard and settings. Every button is a `ui.action`.
import { popupView } from './view.js';
import { appSelectionView } from '../core/settings.js';
import {
  api, h, send, watchState, renderInto, setup, actionButton, actionSwitch, actionToggle,
  statusBadge, connectionBadge, openDashboard, openSettings, openConversation, overlayHidden, setOverlayHidden,
} from './dom.js';

const root = document.getElementById('app');
let state = null;
let tabWorkerId = null;
let hideOverlay = false;
let appSelection = null;

setup({ statusEl: document.getElementById('status'), redraw: draw });

async function load() {
  const [answer, [tab] = [], settings] = await Promise.all([
    send({ type: 'ui.state' }),
    api.tabs.query({ active: true, currentWindow: true }).catch(() => []),
    send({ type: 'ui.settings.get' }).catch(() => null),
  ]);
  appSelection = settings?.ok ? appSelectionView(settings.settings) : null;
  state = answer?.connection ? answer : { connection: { status: 'offline' }, summary: null, tabs: {} };
  tabWorkerId = tab ? state.tabs?.[tab.id] ?? null : null;
  hideOverlay = await overlayHidden().catch(() => false);
  draw();
}

function draw() {
  if (!state) return;
  const view = popupView(state, tabWorkerId, Date.now());
  renderInto(root, [header(view), ...view.runs.map(runSection), countsSection(view), workersSection(view), currentSection(view), footer()]);
}

function header(view) {
  const c = view.connection;
  const fix = c.status === 'token_missing' || c.status === 'unauthorized';
  return h('header', { class: 'top' },
    h('div', { class: 'title-line' }, h('h1', { text: 'Orchestrator' }), connectionBadge(c)),
    c.hint && h('p', { class: 'hint', 'data-testid': 'connection-hint' }, c.hint, ' ',
      fix && h('button', { type: 'button', class: 'link', 'data-key': 'fix-settings', onclick: openSettings }, 'Open settings')),
    appSelection && !appSelection.on && h('p', { class: 'hint', 'data-testid': 'app-warning' }, appSelection.text, ' ',
      h('button', { type: 'button', class: 'link', 'data-key': 'app-settings', onclick: openSettings }, 'Open settings')));
}

function runSection(run) {
  return h('section', { class: 'run', 'data-testid': 'run', 'aria-label': `Run ${run.title}` },
    h('p', { class: 'eyebrow', text: 'Execution continuity' }),
    h('div', { class: 'run-line' }, h('p', { class: 'run-title', text: run.title }), actionSwitch({
      key: `auto:${run.runId}`, label: 'Auto Resume', checked: run.autoResume, testid: 'run-auto-resume',
      hint: 'The run default: workers without their own override follow it',
      onMessage: { action: 'auto_resume_on', runId: run.runId },
      offMessage: { action: 'auto_resume_off', runId: run.runId },
    })),
    h('p', { class: 'muted small', text: 'Keep unfinished workers running across ChatGPT turn boundaries.' }));
}

function countsSection(view) {
  const item = (label, value, testid, attention = false) => h('div', { class: `count${attention && value ? ' attention' : ''}` },
    h('dt', { text: label }), h('dd', { 'data-testid': testid, text: String(value) }));
  const c = view.counts;
  return h('dl', { class: 'counts', 'aria-label': 'Worker counts' },
    item('Active', c.active, 'count-active'), item('Working', c.working, 'count-working'),
    item('Resuming', c.resuming, 'count-resuming'), item('Needs you', c.needsYou, 'count-needs-you', true));
}

function workersSection(view) {
  return h('section', { class: 'workers', 'aria-label': 'Active workers' },
    view.emptyText
      ? h('p', { class: 'muted empty', 'data-testid': 'empty', text: view.emptyText })
      : h('ul', { class: 'rows', 'data-testid': 'worker-list' }, view.rows.map(workerRow)));
}

function workerRow(row) {
  // A card or a dialog in the tab is dealt with there: the row opens the conversation.
  const inTab = row.status.key === 'needs_you' && row.hold !== null && row.conversationUrl;
  const primary = inTab
    ? h('button', { type: 'button', class: 'btn small', 'data-key': `open:${row.workerId}`, 'data-testid': 'row-open-conversation', onclick: () => { void openConversation(state.tabs, row.workerId, row.conversationUrl); window.close(); } }, 'Open conversation')
    : row.status.key === 'needs_you'
    ? h('button', { type: 'button', class: 'btn small', 'data-key': `answer:${row.workerId}`, 'data-testid': 'row-answer', onclick: () => { openDashboard('#needs-you'); window.close(); } }, 'Answer…')
    : row.actions.filter((a) => !a.destructive).slice(0, 1).map((a) => actionButton({
      key: `${a.action}:${row.workerId}:row`, label: a.label, hint: a.hint, small: true, testid: `row-${a.key}`,
      message: { action: a.action, workerId: row.workerId },
    }));
  return h('li', { class: 'row', 'data-testid': 'worker-row', 'data-worker-id': row.workerId, 'data-status': row.status.key },
    h('div', { class: 'row-main' },
      h('p', { class: 'row-title' }, h('span', { 'data-testid': 'worker-title', text: row.title }), ' ', h('span', { class: 'mono muted', 'data-testid': 'worker-name', text: row.name })),
      h('p', { class: 'row-status' }, statusBadge(row.status), row.status.note && h('span', { class: 'note', 'data-testid': 'worker-note', text: row.status.note })),
      h('p', { class: 'muted small', 'data-testid': 'worker-detail', text: row.detail }),
      row.needsYou && h('p', { class: 'question', 'data-testid': 'worker-question', text: row.needsYou })),
    h('div', { class: 'row-actions' }, primary));
}

function currentSection(view) {
  const row = view.current;
  if (!row) {
    return h('section', { class: 'current', 'data-testid': 'current-worker', 'data-empty': 'true' },
      h('h2', { text: 'Current conversation' }), h('p', { class: 'muted small', text: 'This tab is not a managed conversation.' }));
  }
  return h('section', { class: 'current', 'data-testid': 'current-worker', 'data-worker-id': row.workerId },
    h('h2', { text: 'Current conversation' }),
    h('p', { class: 'row-title' }, h('span', { text: row.title }), ' ', h('span', { class: 'mono muted', text: row.name })),
    h('p', { class: 'row-status' }, statusBadge(row.status, 'current-status'), h('span', { class: 'small', text: row.attemptText }),
      row.status.note && h('span', { class: 'note', text: row.status.note })),
    h('p', { class: 'row-status' }, h('span', { class: 'small', 'data-testid': 'current-policy', text: row.policy.text }),
      h('span', { class: `source${row.policy.isOverride ? ' override' : ''}`, text: row.policy.sourceLabel })),
    h('div', { class: 'actions' }, row.actions.filter((a) => !a.destructive).map((a) => actionButton({
      key: `${a.action}:${row.workerId}:current`, label: a.label, hint: a.hint, testid: `current-${a.key}`,
      message: { action: a.action, workerId: row.workerId },
    }))));
}

function footer() {
  return h('footer', { class: 'bottom' },
    h('div', { class: 'links' },
      h('button', { type: 'button', class: 'link', 'data-key': 'dashboard', 'data-testid': 'open-dashboard', onclick: () => { openDashboard(); window.close(); } }, 'Open dashboard'),
      h('button', { type: 'button', class: 'link', 'data-key': 'settings', 'data-testid': 'open-settings', onclick: openSettings }, 'Settings ›')),
    actionToggle({
      key: 'overlay', label: 'Overlay', checked: !hideOverlay, testid: 'overlay-toggle', hint: 'The status pill on managed ChatGPT tabs',
      onToggle: async () => { hideOverlay = !hideOverlay; await setOverlayHidden(hideOverlay); draw(); },
    }));
}

watchState(load);
setInterval(draw, 15_000);
