// The toolbar popup, the primary operator surface (spec 000 §17.2): connection, Auto
// Resume per run, counts, the active workers, the current tab's worker with Pause and
// Continue now, and links to the dashboard and settings. On a ChatGPT tab that is not
// managed it offers "Start a run here" and "Attach this conversation to…" (start-view.js).
// Every button is a `ui.action`.
import { actionErrorText, popupView } from './view.js';
import { attachConfirm, DEAD_MAN_CHOICES, deadManText, NAME_CHARS_MAX, PLAN_CHARS_MAX, startHereView, startRequest } from './start-view.js';
import { appSelectionView } from '../core/settings.js';
import {
  api, h, send, watchState, renderInto, setup, actionButton, actionSwitch, actionToggle,
  statusBadge, connectionBadge, openDashboard, openSettings, openConversation, overlayHidden, setOverlayHidden,
  announce, confirmDialog,
} from './dom.js';

const root = document.getElementById('app');
let state = null;
let tabWorkerId = null;
let hideOverlay = false;
let appSelection = null;
let activeTabId = null;
/** The start form while open (its typed values survive redraws), else null. */
let startForm = null;
/** The worker chosen in the attach list. */
let attachChoice = null;

setup({ statusEl: document.getElementById('status'), redraw: draw });

async function load() {
  const [answer, [tab] = [], settings] = await Promise.all([
    send({ type: 'ui.state' }),
    api.tabs.query({ active: true, currentWindow: true }).catch(() => []),
    send({ type: 'ui.settings.get' }).catch(() => null),
  ]);
  appSelection = settings?.ok ? appSelectionView(settings.settings) : null;
  state = answer?.connection ? answer : { connection: { status: 'offline' }, summary: null, tabs: {} };
  activeTabId = tab?.id ?? null;
  tabWorkerId = tab ? state.tabs?.[tab.id] ?? null : null;
  hideOverlay = await overlayHidden().catch(() => false);
  draw();
}

function draw() {
  if (!state) return;
  const view = popupView(state, tabWorkerId, Date.now());
  const offer = startHereView(state, activeTabId);
  const current = offer ? startSection(offer) : currentSection(view);
  renderInto(root, [header(view), ...view.runs.map(runSection), countsSection(view), workersSection(view), current, footer()]);
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
    run.stoppedMoving
      ? h('p', { class: 'question', 'data-testid': 'run-stopped', text: run.stoppedMoving })
      : h('p', { class: 'muted small', text: 'Keep unfinished workers running across ChatGPT turn boundaries.' }));
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
      : h('ul', { class: 'rows', 'data-testid': 'worker-list' }, view.rows.map(workerRow)),
    // What finished stays visible: the count, and the dashboard's Finished one click away.
    view.finishedText && h('button', {
      type: 'button', class: 'link small', 'data-key': 'finished', 'data-testid': 'finished-count',
      onclick: () => { openDashboard('#finished'); window.close(); },
    }, view.finishedText));
}

function workerRow(row) {
  // A card or a dialog in the tab is dealt with there: the row opens the conversation.
  const inTab = row.status.key === 'needs_you' && row.hold !== null && row.conversationUrl;
  const recover = row.actions.find((a) => a.key === 'recover');
  const primary = recover
    ? actionButton({ key: `recover:${row.workerId}:row`, label: 'Recover', hint: recover.hint, small: true, testid: 'row-recover', message: { action: recover.action, workerId: row.workerId } })
    : inTab
    ? h('button', { type: 'button', class: 'btn small', 'data-key': `open:${row.workerId}`, 'data-testid': 'row-open-conversation', onclick: () => { void openConversation(state.tabs, row.workerId, row.conversationUrl); window.close(); } }, 'Open conversation')
    : row.status.key === 'needs_you'
    ? h('button', { type: 'button', class: 'btn small', 'data-key': `answer:${row.workerId}`, 'data-testid': 'row-answer', onclick: () => { openDashboard('#needs-you'); window.close(); } }, 'Answer…')
    : row.actions.filter((a) => !a.destructive).slice(0, 1).map((a) => actionButton({
      key: `${a.action}:${row.workerId}:row`, label: a.label, hint: a.hint, small: true, testid: `row-${a.key}`,
      message: a.message,
    }));
  return h('li', { class: 'row', 'data-testid': 'worker-row', 'data-worker-id': row.workerId, 'data-status': row.status.key },
    h('div', { class: 'row-main' },
      h('p', { class: 'row-title' }, h('span', { 'data-testid': 'worker-title', text: row.title }), ' ', h('span', { class: 'mono muted', 'data-testid': 'worker-name', text: row.name })),
      h('p', { class: 'row-status' }, statusBadge(row.status), row.status.note && h('span', { class: 'note', 'data-testid': 'worker-note', text: row.status.note })),
      h('p', { class: 'muted small', 'data-testid': 'worker-detail', text: row.detail }),
      // A CLI worker has no tab to open: its kind, directory and session say where it runs.
      row.cli && h('p', { class: 'muted small mono', 'data-testid': 'worker-cli', text: row.cli.text }),
      // Who carries it (its executor, connected or not, since when), unless the note says it.
      row.carrier && row.carrier !== row.status.note && h('p', { class: 'muted small', 'data-testid': 'worker-carrier', text: row.carrier }),
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
      message: a.message,
    }))));
}

// "Start a run here" and "Attach this conversation to…" on a ChatGPT tab nobody manages.
function startSection(offer) {
  const offline = !offer.live && h('p', { class: 'hint', text: 'Connect to the daemon first (see the badge above).' });
  if (startForm) return startFormSection(offer, offline);
  return h('section', { class: 'current start', 'data-testid': 'start-here', 'data-new-chat': String(offer.newChat) },
    h('h2', { text: 'This conversation' }),
    h('p', { class: 'muted small', text: 'Not managed. Start a run whose root works here, or attach it to a worker.' }),
    offline,
    h('div', { class: 'actions' },
      h('button', {
        type: 'button', class: 'btn primary', 'data-key': 'start-open', 'data-testid': 'start-run-open', disabled: !offer.live,
        onclick: () => { startForm = { taskName: '', rootConversationName: '', context: '', autoResume: true, deadMan: DEAD_MAN_CHOICES[0].value }; draw(); document.getElementById('start-task')?.focus(); },
      }, 'Start a run here…')),
    attachPart(offer));
}

/** The start form's fields by the names startRequest gives a mistake (`field`). */
const START_FIELDS = { taskName: 'start-task', rootConversationName: 'start-root', context: 'start-plan' };

function startFormSection(offer, offline) {
  const field = (id, label, key, props = {}) => [
    h('label', { for: id, text: label }),
    h(props.rows ? 'textarea' : 'input', {
      id, 'data-key': id, 'data-testid': id, value: startForm[key], ...props,
      'aria-invalid': startForm.mistake?.field === key ? 'true' : null,
      'aria-describedby': startForm.mistake?.field === key ? 'start-error' : null,
      oninput: (e) => { startForm[key] = e.target.value; },
    }),
  ];
  // The form checks itself (novalidate): the browser's own bubble does not show in a popup,
  // so a mistake is said under the form, next to Start run (role=alert: read out once), and
  // its field gets the focus.
  const submit = async (event) => {
    event.preventDefault();
    const request = startRequest(startForm, offer.tabId);
    if (request.error) {
      startForm.mistake = { field: request.field, text: request.error };
      draw();
      document.getElementById(START_FIELDS[request.field])?.focus();
      return;
    }
    startForm.mistake = null;
    const result = await send({ type: 'ui.action', ...request });
    if (!result?.ok) {
      startForm.mistake = { field: null, text: actionErrorText(result?.error) };
      draw();
      return;
    }
    startForm = null;
    announce(`Run "${request.taskName}" started: its root works in this tab.`);
    await load();
  };
  return h('section', { class: 'current start', 'data-testid': 'start-form-section' },
    h('h2', { text: 'Start a run here' }),
    h('form', { class: 'start-form', 'data-testid': 'start-form', novalidate: true, onsubmit: submit },
      field('start-task', 'Task name', 'taskName', { 'aria-required': 'true', maxlength: String(NAME_CHARS_MAX), placeholder: 'Billing export' }),
      field('start-root', 'Root conversation name', 'rootConversationName', { maxlength: String(NAME_CHARS_MAX), placeholder: 'Task name + “root”' }),
      field('start-plan', 'Plan (optional)', 'context', { rows: 3, maxlength: String(PLAN_CHARS_MAX), placeholder: 'What the run must achieve; the root splits it into lanes.' }),
      h('label', { class: 'check' },
        h('input', { type: 'checkbox', 'data-key': 'start-auto', 'data-testid': 'start-auto-resume', checked: startForm.autoResume, onchange: (e) => { startForm.autoResume = e.target.checked; } }),
        ' Auto Resume: keep the run\'s workers going across turns'),
      h('label', { for: 'start-dead-man', text: 'If the run stops moving while you are away' }),
      h('select', {
        id: 'start-dead-man', 'data-key': 'start-dead-man', 'data-testid': 'start-dead-man', 'aria-describedby': 'start-dead-man-text',
        onchange: (e) => { startForm.deadMan = e.target.value; draw(); },
      }, DEAD_MAN_CHOICES.map((c) => h('option', { value: c.value, selected: c.value === startForm.deadMan, text: c.label }))),
      h('p', { id: 'start-dead-man-text', class: 'muted small', 'data-testid': 'start-dead-man-text', text: deadManText(startForm.deadMan) }),
      h('p', { class: 'muted small', text: offer.startText }),
      offline,
      startForm.mistake && h('p', { id: 'start-error', class: 'form-error', role: 'alert', 'data-testid': 'start-error', text: startForm.mistake.text }),
      h('div', { class: 'actions' },
        h('button', { type: 'submit', class: 'btn primary', 'data-key': 'start-submit', 'data-testid': 'start-submit', disabled: !offer.live }, 'Start run'),
        h('button', { type: 'button', class: 'btn', 'data-key': 'start-cancel', 'data-testid': 'start-cancel', onclick: () => { startForm = null; draw(); } }, 'Cancel'))));
}

function attachPart(offer) {
  if (offer.attachText) return h('p', { class: 'muted small', 'data-testid': 'attach-unavailable', text: offer.attachText });
  if (!offer.attachable.length) return null;
  const chosen = offer.attachable.find((w) => w.workerId === attachChoice) ?? offer.attachable[0];
  return h('div', { class: 'attach' },
    h('label', { for: 'attach-worker', text: 'Attach this conversation to…' }),
    h('select', {
      id: 'attach-worker', 'data-key': 'attach-worker', 'data-testid': 'attach-worker',
      onchange: (e) => { attachChoice = e.target.value; },
    }, offer.attachable.map((w) => h('option', { value: w.workerId, selected: w.workerId === chosen.workerId, text: w.label }))),
    h('button', {
      type: 'button', class: 'btn', 'data-key': 'attach-submit', 'data-testid': 'attach-submit', disabled: !offer.live,
      onclick: async () => {
        const worker = offer.attachable.find((w) => w.workerId === (attachChoice ?? chosen.workerId)) ?? chosen;
        if ((await confirmDialog(attachConfirm(worker))) === null) return;
        const result = await send({ type: 'ui.action', action: 'worker_attach', workerId: worker.workerId, tabId: offer.tabId });
        if (!result?.ok) return announce(actionErrorText(result?.error), 'error');
        announce(`${worker.name} now works in this conversation.`);
        await load();
      },
    }, 'Attach'));
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
