// The operator dashboard (spec 000 §17.4-17.5, plan C11): run controls, `Needs you`
// items with an answer box, stall cards, the worker table, and a timeline picture per
// worker from worker_attempts / worker_events. Every button is a `ui.action`; the page
// never decides anything by itself. A worker whose ChatGPT page failed closed gets a pointer
// to "Copy page shape" in that tab's overlay: this page cannot read the tab. With OAuth on
// (the daemon's --public-url), the connections waiting for the operator's approval and the
// connected clients, asked for with `oauth_pending` every few seconds while the page is open.
import { dashboardView, timelineView, eventText, clockLabel, countText, stopRunConfirm } from './view.js';
import { oauthView, oauthFailedView, OAUTH_POLL_MS } from './oauth-view.js';
import {
  h, send, watchState, renderInto, setup, announce, actionButton, actionSwitch, statusBadge,
  connectionBadge, openSettings, openConversation,
} from './dom.js';
import { timelineSvg, timelineLegend } from './timeline.js';

const root = document.getElementById('app');
const changes = document.getElementById('changes');
const FETCH_SPACING_MS = 3000;
const TIMELINE_WIDTH = 1100;
const EVENTS_SHOWN = 8;

let state = null;
let lastStatuses = null;
let retry = null; // the one pending redraw for throttled history fetches
const drafts = new Map(); // workerId -> the answer being typed
const history = new Map(); // workerId -> {sig, at, busy, attempts, events, error}
let oauth = oauthView(null, 0); // the OAuth section's view model (hidden until the daemon says OAuth is on)
let oauthBusy = false;

setup({ statusEl: document.getElementById('status'), redraw: draw });

async function load() {
  const first = state === null;
  const answer = await send({ type: 'ui.state' });
  state = answer?.connection ? answer : { connection: { status: 'offline' }, summary: null, tabs: {} };
  draw();
  // The popup's `Answer…` opens `#needs-you`.
  if (first && location.hash) document.getElementById(location.hash.slice(1))?.scrollIntoView();
}

function tz() {
  return -new Date().getTimezoneOffset();
}

function draw() {
  if (!state) return;
  const now = Date.now();
  const attempts = Object.fromEntries([...history].map(([id, entry]) => [id, entry.attempts ?? null]));
  const view = dashboardView(state, now, attempts);
  announceChanges(view);
  const rows = view.runs.flatMap((r) => r.rows);
  renderInto(root, [
    header(view),
    view.emptyText && h('p', { class: 'muted empty', 'data-testid': 'empty', text: view.emptyText }),
    oauth.shown && oauthSection(oauth),
    (view.needsYou.length > 0 || view.stoppedRuns.length > 0) && needsYouSection(view.needsYou, view.stoppedRuns),
    view.stalls.length > 0 && stallsSection(view.stalls),
    view.runs.length > 0 && runsSection(view.runs),
    rows.length > 0 && tableSection(rows),
    rows.length > 0 && timelinesSection(rows, now),
    view.finished.length > 0 && finishedSection(view.finished),
  ]);
  rows.forEach(refreshHistory);
}

/** Announces only what a person must notice: a worker needing them, stalling or ending; the connection. */
function announceChanges(view) {
  const now = new Map(view.runs.flatMap((r) => r.rows).map((r) => [r.workerId, r]));
  now.set('connection', { status: { key: view.connection.status, label: view.connection.label }, title: 'Connection' });
  if (lastStatuses) {
    const lines = [...now].filter(([id, r]) => lastStatuses.get(id) !== r.status.key
      && ['needs_you', 'stalled', 'complete', 'failed', 'live', 'connecting', 'offline', 'no_leader', 'unauthorized', 'token_missing'].includes(r.status.key))
      .map(([, r]) => `${r.title}: ${r.status.label}.`);
    if (lines.length) changes.textContent = lines.join(' ');
  }
  lastStatuses = new Map([...now].map(([id, r]) => [id, r.status.key]));
}

function header(view) {
  const c = view.counts;
  return h('header', { class: 'top' },
    h('div', { class: 'title-line' },
      h('h1', { text: 'Orchestrator dashboard' }),
      connectionBadge(view.connection),
      h('button', { type: 'button', class: 'link', 'data-key': 'settings', 'data-testid': 'open-settings', onclick: openSettings }, 'Settings / Advanced')),
    view.connection.hint && h('p', { class: 'hint', 'data-testid': 'connection-hint', text: view.connection.hint }),
    h('p', { class: 'muted', 'data-testid': 'totals', text: countsText(c) }));
}

function countsText(c) {
  return `Active ${c.active} · Working ${c.working} · Resuming ${c.resuming} · Needs you ${c.needsYou} · Stalled ${c.stalled} · Paused ${c.paused} · Waiting ${c.waiting}`;
}

function needsYouSection(rows, stoppedRuns) {
  return h('section', { id: 'needs-you', class: 'panel attention', 'aria-labelledby': 'needs-you-h' },
    h('h2', { id: 'needs-you-h' }, h('span', { 'aria-hidden': 'true', text: '! ' }), 'Needs you'),
    stoppedRuns.map(stoppedCard),
    rows.map((row) => {
      const id = `answer-${row.workerId}`;
      return h('article', { class: 'card', 'data-testid': 'needs-you-item', 'data-worker-id': row.workerId },
        workerHeading(row),
        h('p', { class: 'question', 'data-testid': 'needs-you-question', text: row.needsYou ?? 'The worker is waiting for you.' }),
        ...(row.answerable ? answerBox(row, id) : row.approval ? [approvalActions(row)] : [tabActions(row)]));
    }));
}

// A CLI's approval request (`executor-cli --approvals ask`): nobody can answer it in a page,
// so the card answers it, once; the daemon refuses an answer to a request that is gone.
function approvalActions(row) {
  const a = row.approval;
  return h('div', { class: 'actions' },
    actionButton({
      key: `approve:${row.workerId}:${a.id}`, label: 'Approve', primary: true, testid: 'needs-you-approve',
      hint: `Let it ${a.summary || 'go on'}`, message: a.approve,
    }),
    actionButton({
      key: `decline:${row.workerId}:${a.id}`, label: 'Decline', testid: 'needs-you-decline',
      hint: 'Refuse it; the session goes on without it', message: a.decline,
    }));
}

// A run the daemon found stopped while nobody looked: its sentence, and one attempt of the
// root now (a root without a conversation is recovered into a fresh one).
function stoppedCard(run) {
  return h('article', { class: 'card', 'data-testid': 'run-stopped', 'data-run-id': run.runId },
    h('p', { class: 'row-title', text: run.title }),
    h('p', { class: 'question', 'data-testid': 'run-stopped-text', text: run.stoppedMoving }),
    run.root && h('div', { class: 'actions' }, actionButton({
      key: `stopped:${run.runId}`, label: 'Continue the root now', primary: true, testid: 'run-stopped-continue',
      hint: 'One attempt of /root now: in its conversation, or a fresh one with the recovery prompt when it has none',
      message: { action: 'continue_now', workerId: run.root.workerId },
    })));
}

// A dialog over the conversation or a check ChatGPT asked for is dealt with in the tab; a
// check's pause is then ended with Resume. A closed conversation is recovered into a new one.
function tabActions(row) {
  const resume = row.actions.find((a) => a.key === 'resume');
  const recover = row.actions.find((a) => a.key === 'recover');
  return h('div', { class: 'actions' },
    resume && actionButton({
      key: `resume:${row.workerId}:needs`, label: resume.label, primary: true, testid: 'needs-you-resume', hint: resume.hint,
      message: { action: resume.action, workerId: row.workerId },
    }),
    recover && actionButton({
      key: `recover:${row.workerId}:needs`, label: recover.label, primary: true, testid: 'needs-you-recover', hint: recover.hint,
      message: { action: recover.action, workerId: row.workerId },
    }),
    conversationLink(row, 'needs'));
}

// The answer box of a question a worker asked (worker_await_human).
function answerBox(row, id) {
  return [
    // The answers the worker offered: one click puts one in the box (any other may be written).
    row.choices.length > 0 && h('div', { class: 'actions choices', role: 'group', 'aria-label': 'Offered answers', 'data-testid': 'needs-you-choices' },
      row.choices.map((choice, i) => h('button', {
        type: 'button', class: 'btn small', 'data-key': `choice:${row.workerId}:${i}`, 'data-testid': 'needs-you-choice',
        onclick: () => { drafts.set(row.workerId, choice); draw(); },
      }, choice))),
    h('label', { for: id, text: 'Your answer' }),
    h('textarea', {
      id, rows: 3, 'data-key': id, 'data-testid': 'needs-you-answer', value: drafts.get(row.workerId) ?? '',
      oninput: (e) => drafts.set(row.workerId, e.target.value),
    }),
    h('div', { class: 'actions' },
      actionButton({
        key: `resolve:${row.workerId}`, label: 'Send answer', primary: true, testid: 'needs-you-send',
        message: () => {
          const text = (drafts.get(row.workerId) ?? '').trim();
          if (!text) announce('Type an answer first.', 'error');
          return text ? { action: 'resolve_human', workerId: row.workerId, text } : null;
        },
        done: () => drafts.delete(row.workerId),
      }),
      conversationLink(row, 'answer')),
  ];
}

// OAuth: a client (ChatGPT's connector, say) asked to connect; its user's sign-in window
// waits until the operator approves or denies here (or with `orchestrator oauth`).
function oauthSection(view) {
  return h('section', { id: 'oauth', class: 'panel attention', 'aria-labelledby': 'oauth-h', 'data-testid': 'oauth' },
    h('h2', { id: 'oauth-h', text: 'Connections waiting for your approval' }),
    view.error && h('p', { class: 'hint', 'data-testid': 'oauth-error', text: view.error }),
    view.waitingEmptyText && h('p', { class: 'muted', 'data-testid': 'oauth-waiting-empty', text: view.waitingEmptyText }),
    view.waiting.map((w) => h('article', { class: 'card', 'data-testid': 'oauth-request', 'data-code': w.code },
      h('p', { class: 'worker-heading' },
        h('span', { class: 'worker-title', 'data-testid': 'oauth-client', text: w.clientName }),
        w.selfRegistered && h('span', { class: 'badge tone-quiet', 'data-testid': 'oauth-self-registered', text: 'self-registered' })),
      h('p', {}, 'Sends you back to ', h('b', { 'data-testid': 'oauth-host', text: w.redirectHost }), ` · ${w.scopesText}`),
      h('p', {}, 'Code ', h('span', { class: 'mono', 'data-testid': 'oauth-code', text: w.code }),
        h('span', { class: 'muted', 'data-testid': 'oauth-expires', text: ` · ${w.expiresText}` })),
      h('p', { class: 'muted small', text: 'Approve only if the sign-in window you opened shows this code.' }),
      h('div', { class: 'actions' },
        actionButton({ key: `oauth-approve:${w.code}`, label: 'Approve', primary: true, testid: 'oauth-approve', hint: `Approve ${w.label}`, message: { action: 'oauth_approve', code: w.code }, done: pollOAuth }),
        actionButton({ key: `oauth-deny:${w.code}`, label: 'Deny', testid: 'oauth-deny', hint: `Deny ${w.label}`, message: { action: 'oauth_deny', code: w.code }, done: pollOAuth })))),
    h('h3', { text: 'Connected clients' }),
    view.grantsEmptyText && h('p', { class: 'muted', 'data-testid': 'oauth-grants-empty', text: view.grantsEmptyText }),
    view.grants.length > 0 && h('ul', { class: 'oauth-grants', 'data-testid': 'oauth-grants' }, view.grants.map((g) => h('li', { 'data-testid': 'oauth-grant', 'data-grant-id': g.grantId },
      h('span', { class: 'worker-title', text: g.clientName }),
      h('span', { class: 'muted small', text: ` · ${g.scopesText} · ${g.connectedText} · ${g.lastUsedText} ` }),
      actionButton({
        key: `oauth-revoke:${g.grantId}`, label: 'Revoke', destructive: true, small: true, testid: 'oauth-revoke', hint: `Disconnect ${g.clientName}`,
        message: { action: 'oauth_revoke', grantId: g.grantId }, done: pollOAuth,
        confirm: { title: `Disconnect ${g.clientName}?`, body: 'Its tokens stop working at once; to connect again it must sign in and be approved here again.', confirmLabel: 'Revoke', reason: false },
      })))));
}

/** Asks the daemon for the OAuth requests and grants (one question at a time). */
async function pollOAuth() {
  if (oauthBusy) return;
  oauthBusy = true;
  const answer = await send({ type: 'ui.query', query: 'oauth_pending' });
  oauthBusy = false;
  oauth = answer?.ok || !oauth.shown ? oauthView(answer, Date.now()) : oauthFailedView(oauth, answer?.error);
  draw();
}

function stallsSection(stalls) {
  return h('section', { class: 'panel', 'aria-labelledby': 'stalls-h' },
    h('h2', { id: 'stalls-h', text: 'Stalls' }),
    stalls.map(({ row, title, detail }) => h('article', { class: 'card stall', 'data-testid': 'stall-card', 'data-worker-id': row.workerId },
      h('p', { class: 'stall-title' }, h('span', { 'aria-hidden': 'true', text: '⚠ ' }), h('span', { 'data-testid': 'stall-title', text: title }), h('span', { class: 'muted', 'data-testid': 'stall-detail', text: ` · ${detail}` })),
      workerHeading(row),
      h('div', { class: 'actions' },
        actionButton({ key: `continue_anyway:${row.workerId}:stall`, label: 'Continue anyway', testid: 'stall-continue', message: { action: 'continue_anyway', workerId: row.workerId } }),
        !['paused', 'stalled'].includes(row.status.key) && actionButton({ key: `pause:${row.workerId}:stall`, label: 'Pause', testid: 'stall-pause', hint: 'Pause after the current turn', message: { action: 'pause_after_turn', workerId: row.workerId } }),
        conversationLink(row, 'stall'),
        stopButton(row, 'stall')))));
}

function runsSection(runs) {
  return h('section', { class: 'panel', 'aria-labelledby': 'runs-h' },
    h('h2', { id: 'runs-h', text: 'Runs' }),
    runs.map((run) => h('article', { class: 'card run', 'data-testid': 'run-card', 'data-run-id': run.runId },
      h('div', { class: 'run-head' },
        h('h3', { 'data-testid': 'run-title', text: run.title }),
        h('span', { class: 'muted small', text: `${run.statusLabel} · Active ${run.counts.active} · Needs you ${run.counts.needsYou}` })),
      h('div', { class: 'actions', role: 'group', 'aria-label': `Controls for ${run.title}` },
        actionSwitch({
          key: `auto:${run.runId}`, label: 'Auto Resume unfinished workers', checked: run.autoResume, testid: 'run-auto-resume',
          hint: 'The run default; worker overrides keep their own setting',
          onMessage: { action: 'auto_resume_on', runId: run.runId }, offMessage: { action: 'auto_resume_off', runId: run.runId },
        }),
        actionButton({ key: `pause-all:${run.runId}`, label: 'Pause all after current turns', testid: 'run-pause-all', message: { action: 'pause_after_turn', runId: run.runId } }),
        actionButton({ key: `resume-all:${run.runId}`, label: 'Resume all unfinished', testid: 'run-resume-all', hint: 'Clears operator pauses; stalled workers need Continue anyway', message: { action: 'resume', runId: run.runId } }),
        h('span', { class: 'spacer' }),
        actionButton({
          key: `stop-run:${run.runId}`, label: 'Stop run', destructive: true, testid: 'run-stop', message: { action: 'stop_run', runId: run.runId },
          confirm: stopRunConfirm(run.title),
        })))));
}

// What finished, failed or was stopped, newest first: how each run ended (its root's
// handoff or reason), when, how long it took, and each worker's own outcome.
function finishedSection(runs) {
  return h('section', { id: 'finished', class: 'panel', 'aria-labelledby': 'finished-h', 'data-testid': 'finished' },
    h('h2', { id: 'finished-h', text: 'Finished' }),
    // Each card's id is the anchor a finished worker's overlay links to (`#finished-run-3`).
    runs.map((run) => h('article', { id: run.anchor, class: 'card run', 'data-testid': 'finished-run', 'data-run-id': run.runId },
      h('div', { class: 'run-head' },
        h('h3', { 'data-testid': 'finished-title', text: run.title }),
        h('span', { class: 'muted small', 'data-testid': 'finished-detail', text: run.detail })),
      run.outcome && h('p', { class: 'question', 'data-testid': 'finished-outcome', text: run.outcome }),
      h('ul', { class: 'finished-workers' }, run.workers.map((w) => h('li', { 'data-testid': 'finished-worker', 'data-worker-id': w.workerId },
        h('span', { class: 'row-title', text: `${w.status.glyph} ${w.title}` }),
        h('span', { class: 'muted small', text: ` · ${w.detail}` }),
        w.outcome && h('p', { class: 'small', 'data-testid': 'finished-worker-outcome', text: w.outcome }),
        w.conversationUrl && h('a', { href: w.conversationUrl, target: '_blank', rel: 'noopener', 'data-key': `finished-conv:${w.workerId}` }, 'Open conversation')))))));
}

function tableSection(rows) {
  const cols = ['Run', 'Worker', 'State', 'Auto Resume', 'Attempt', 'Auto resumes', 'Last progress', 'Block reason', 'Conversation', 'Actions'];
  return h('section', { class: 'panel', 'aria-labelledby': 'workers-h' },
    h('h2', { id: 'workers-h', text: 'Workers' }),
    h('div', { class: 'table-wrap' },
      h('table', { class: 'workers', 'data-testid': 'worker-table' },
        h('thead', {}, h('tr', {}, cols.map((c) => h('th', { scope: 'col', text: c })))),
        h('tbody', {}, rows.map(tableRow)))));
}

function tableRow(row) {
  const cell = (testid, ...children) => h('td', { 'data-testid': testid }, ...children);
  return h('tr', { 'data-testid': 'worker-row', 'data-worker-id': row.workerId, 'data-status': row.status.key },
    cell('cell-run', row.runTitle),
    h('th', { scope: 'row', 'data-testid': 'cell-worker' }, h('span', { class: 'worker-title', text: row.title }), h('span', { class: 'mono muted', text: row.name })),
    cell('cell-state', statusBadge(row.status), row.status.note && h('span', { class: 'note block', text: row.status.note }),
      row.pageShape && h('span', { class: 'note block', 'data-testid': 'page-shape-pointer', title: row.pageShape.hint, text: row.pageShape.pointer })),
    h('td', { 'data-testid': 'cell-policy', class: row.policy.isOverride ? 'override' : null, 'data-source': row.policy.source },
      row.status.terminal ? h('span', { text: row.policy.autoResume ? 'On' : 'Off' }) : actionSwitch({
        key: `auto:${row.workerId}`, label: `Auto Resume for ${row.title}`, quietLabel: true, checked: row.policy.autoResume,
        testid: 'worker-auto-resume', hint: 'Sets an override for this worker',
        onMessage: { action: 'auto_resume_on', workerId: row.workerId }, offMessage: { action: 'auto_resume_off', workerId: row.workerId },
      }),
      h('span', { class: `source${row.policy.isOverride ? ' override' : ''}`, 'data-testid': 'policy-source', text: row.policy.sourceLabel })),
    cell('cell-attempt', String(row.attempts)),
    cell('cell-resumes', String(row.autoResumes)),
    cell('cell-progress', row.progressText.replace(/^progress /, '')),
    cell('cell-block', row.blockReason ?? '—'),
    cell('cell-conversation', conversationLink(row, 'table') ?? '—'),
    h('td', { 'data-testid': 'cell-actions' }, h('div', { class: 'row-actions' },
      row.actions.filter((a) => !a.destructive).map((a) => actionButton({
        key: `${a.action}:${row.workerId}:table`, label: a.label, hint: a.hint, small: true, testid: `worker-${a.key}`,
        message: a.message,
      })),
      stopButton(row, 'table'))));
}

function timelinesSection(rows, now) {
  return h('section', { class: 'panel', 'aria-labelledby': 'timelines-h' },
    h('h2', { id: 'timelines-h', text: 'Timelines' }),
    rows.map((row) => timelineCard(row, now)));
}

function timelineCard(row, now) {
  const hist = history.get(row.workerId);
  let body;
  if (hist?.error) body = h('p', { class: 'muted', text: `Could not load the attempts: ${hist.error}` });
  else if (!hist?.attempts) body = h('p', { class: 'muted', text: 'Loading attempts…' });
  else {
    const geo = timelineView({ attempts: hist.attempts, events: hist.events }, { nowMs: now, tzOffsetMin: tz(), width: TIMELINE_WIDTH });
    body = geo.empty ? h('p', { class: 'muted', text: 'No attempts yet.' }) : [
      h('div', { class: 'timeline-wrap' }, timelineSvg(geo, row.title, tz())),
      geo.hiddenCount > 0 && h('p', { class: 'muted small', text: `${countText(geo.hiddenCount, 'earlier attempt')} not shown.` }),
      timelineLegend(geo),
    ];
  }
  const events = (hist?.events ?? []).filter((e) => typeof e?.atMs === 'number').sort((a, b) => b.atMs - a.atMs).slice(0, EVENTS_SHOWN);
  return h('details', { class: 'card timeline-card', 'data-testid': 'timeline', 'data-worker-id': row.workerId, 'data-key': `tl:${row.workerId}`, open: !row.status.terminal },
    h('summary', { 'data-key': `tl-summary:${row.workerId}` }, workerHeading(row, 'span'), h('span', { class: 'muted small', text: row.detail })),
    // Who carries it (its executor, connected or not, since when), unless the note says it.
    row.carrier && row.carrier !== row.status.note && h('p', { class: 'muted small', 'data-testid': 'worker-carrier', 'data-key': `carrier:${row.workerId}`, text: row.carrier }),
    body,
    events.length > 0 && h('details', { class: 'events', 'data-key': `events-open:${row.workerId}` },
      h('summary', { 'data-key': `events:${row.workerId}`, text: 'Recent events' }),
      h('ol', { 'data-testid': 'worker-events' }, events.map((e) => h('li', {},
        h('time', { class: 'mono muted', text: clockLabel(e.atMs, tz()) }), ' ', eventText(e, row.cli?.kind ?? 'chatgpt'))))),
    h('details', { class: 'diagnostics', 'data-testid': 'diagnostics', 'data-key': `diag-open:${row.workerId}` },
      h('summary', { 'data-key': `diag:${row.workerId}`, text: 'Diagnostics' }),
      h('dl', {}, [
        ['Worker id', row.workerId], ['Run id', row.runId],
        ...(row.cli
          ? [['Executor', row.cli.kindLabel], ['Session', row.cli.session ?? 'none yet'], ['Directory', row.cli.directory ?? 'none'], ['Branch', row.cli.branch ?? 'none']]
          : [['Conversation', row.conversationUrl ?? 'none']]),
        ['Policy', `${row.policy.text} (${row.policy.sourceLabel})`],
        ['Carried by', row.carrier ?? 'nothing (finished)'],
      ].map(([k, v]) => [h('dt', { text: k }), h('dd', { class: 'mono', text: v })]))));
}

function workerHeading(row, tag = 'p') {
  return h(tag, { class: 'worker-heading' },
    h('span', { class: 'worker-title', text: row.title }), h('span', { class: 'mono muted', text: row.name }), statusBadge(row.status));
}

/** A ChatGPT worker's conversation link; a CLI worker's kind, directory and session instead (no link). */
function conversationLink(row, where) {
  if (row.cli) {
    return h('span', { class: 'mono small', 'data-key': `cli:${row.workerId}:${where}`, 'data-testid': 'cli-session', text: row.cli.text });
  }
  if (!row.conversationUrl) return null;
  return h('a', {
    href: row.conversationUrl, target: '_blank', rel: 'noopener', 'data-key': `conv:${row.workerId}:${where}`, 'data-testid': 'conversation-link',
    onclick: (e) => { e.preventDefault(); openConversation(state.tabs, row.workerId, row.conversationUrl); },
  }, 'Open', h('span', { class: where === 'table' ? 'visually-hidden' : null, text: ' conversation' }));
}

// The row's destructive action: Stop worker, or Stop run on the run's /root (its lanes would
// lose their coordinator); the confirmation says what ends and who waits for it.
function stopButton(row, where) {
  const stop = row.actions.find((a) => a.destructive);
  if (!stop) return null;
  return actionButton({
    key: `${stop.key}:${row.workerId}:${where}`, label: stop.label, destructive: true, small: where === 'table',
    testid: stop.key === 'stop_run' ? 'worker-stop-run' : 'worker-stop', hint: stop.hint, message: stop.message, confirm: stop.confirm,
  });
}

/**
 * Fetches a worker's attempts and events when what the summary says about it changed
 * (counts, status, conversation state, newest event), at most every 3 s per worker; after
 * a failed fetch the next change tries again.
 */
function refreshHistory(row) {
  // An attempt closing changes the conversation state or adds an event, not the counts.
  const sig = [row.attempts, row.autoResumes, row.lastProgressAtMs, row.status.key, row.conversationState, row.lastEventAtMs].join('|');
  const hist = history.get(row.workerId) ?? { sig: null, at: 0, busy: false };
  history.set(row.workerId, hist);
  if (hist.sig === sig || hist.busy) return;
  const wait = hist.at + FETCH_SPACING_MS - Date.now();
  if (wait > 0) {
    retry ??= setTimeout(() => { retry = null; draw(); }, wait);
    return;
  }
  Object.assign(hist, { sig, at: Date.now(), busy: true });
  Promise.all([
    // The daemon pages attempts from the oldest: ask for the newest hundred.
    send({ type: 'ui.query', query: 'worker_attempts', workerId: row.workerId, afterSequence: Math.max(0, row.attempts - 100) }),
    send({ type: 'ui.query', query: 'worker_events', workerId: row.workerId }),
  ]).then(([a, e]) => {
    hist.busy = false;
    if (!a?.ok) hist.error = a?.error?.message ?? a?.error?.code ?? 'no answer';
    else {
      hist.error = null;
      hist.attempts = listOf(a.data, 'attempts');
      hist.events = e?.ok ? listOf(e.data, 'events') : [];
    }
    draw();
  });
}

function listOf(data, field) {
  if (Array.isArray(data)) return data;
  return Array.isArray(data?.[field]) ? data[field] : [];
}

watchState(load);
setInterval(draw, 30_000);
pollOAuth();
setInterval(pollOAuth, OAUTH_POLL_MS);
