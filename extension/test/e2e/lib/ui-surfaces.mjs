// What the operator surfaces show, read from their DOM as plain data (popup, dashboard,
// the overlay inside its shadow root), and what they should show, derived from what the
// daemon says through MCP (worker_get / worker_list), independently of src/ui/view.js.
import { evaluate } from './ui-pages.mjs';

/**
 * The status word (view.js's STATUSES key) that spec 000 §17.1 gives a worker, from the
 * daemon's own MCP view of it: the oracle the surfaces are checked against.
 */
export function expectedStatus(worker) {
  switch (worker.disposition) {
    case 'completed': return 'complete';
    case 'failed': return 'failed';
    case 'cancelled': return 'stopped';
    case 'awaiting_human': return 'needs_you';
    case 'awaiting_dependency': return 'waiting';
    case 'paused': return worker.progress?.stall === 'paused' ? 'stalled' : 'paused';
    case 'running': return worker.binding?.state === 'generating' ? 'working' : 'resuming';
    case 'awaiting_execution':
      // Its conversation was closed: only a person's recovery or attach moves it.
      if (worker.binding?.state === 'closed') return 'needs_you';
      if (!worker.attempts && !worker.binding?.conversationUrl) return 'waiting';
      return worker.policy?.mode === 'auto' && !worker.pauseAfterTurn ? 'resuming' : 'paused';
    default: return 'unknown';
  }
}

/** The popup's counts for the daemon's workers of every unfinished run. */
export function expectedCounts(workers) {
  const keys = workers.map(expectedStatus);
  const n = (k) => keys.filter((x) => x === k).length;
  return {
    active: keys.filter((k) => !['complete', 'failed', 'stopped'].includes(k)).length,
    working: n('working'),
    resuming: n('resuming'),
    needsYou: n('needs_you'),
  };
}

export function readPopup(page) {
  return evaluate(page, () => {
    const q = (sel, root = document) => root.querySelector(`[data-testid="${sel}"]`);
    const text = (el) => (el ? el.textContent.trim() : null);
    const current = q('current-worker');
    return {
      connection: q('connection')?.dataset.status ?? null,
      autoResume: q('run-auto-resume')?.getAttribute('aria-checked') ?? null,
      counts: {
        active: Number(text(q('count-active'))),
        working: Number(text(q('count-working'))),
        resuming: Number(text(q('count-resuming'))),
        needsYou: Number(text(q('count-needs-you'))),
      },
      empty: text(q('empty')),
      rows: [...document.querySelectorAll('[data-testid="worker-row"]')].map((row) => ({
        workerId: row.dataset.workerId,
        status: row.dataset.status,
        badge: q('worker-status', row)?.dataset.status ?? null,
        label: text(q('worker-status', row)),
        note: text(q('worker-note', row)),
        question: text(q('worker-question', row)),
        detail: text(q('worker-detail', row)),
        buttons: [...row.querySelectorAll('button[data-testid]')].map((b) => b.dataset.testid),
      })),
      current: current && !current.dataset.empty ? {
        workerId: current.dataset.workerId,
        status: q('current-status', current)?.dataset.status ?? null,
        text: text(current),
        buttons: [...current.querySelectorAll('button[data-testid]')].map((b) => b.dataset.testid),
      } : null,
      message: text(q('action-status')),
    };
  });
}

export function readDashboard(page) {
  return evaluate(page, () => {
    const q = (sel, root = document) => root.querySelector(`[data-testid="${sel}"]`);
    const all = (sel, root = document) => [...root.querySelectorAll(`[data-testid="${sel}"]`)];
    const text = (el) => (el ? el.textContent.trim() : null);
    const table = q('worker-table');
    return {
      connection: q('connection')?.dataset.status ?? null,
      totals: text(q('totals')),
      empty: text(q('empty')),
      runs: all('run-card').map((card) => ({ runId: card.dataset.runId, title: text(q('run-title', card)) })),
      autoResume: q('run-auto-resume')?.getAttribute('aria-checked') ?? null,
      rows: table ? all('worker-row', table).map((row) => ({
        workerId: row.dataset.workerId,
        status: row.dataset.status,
        badge: q('worker-status', q('cell-state', row))?.dataset.status ?? null,
        state: text(q('cell-state', row)),
        policySource: text(q('policy-source', row)),
        policySourceKey: q('cell-policy', row)?.dataset.source ?? null,
        attempt: text(q('cell-attempt', row)),
        resumes: text(q('cell-resumes', row)),
        block: text(q('cell-block', row)),
        buttons: [...q('cell-actions', row).querySelectorAll('button[data-testid]')].map((b) => b.dataset.testid),
      })) : [],
      needsYou: all('needs-you-item').map((item) => ({ workerId: item.dataset.workerId, question: text(q('needs-you-question', item)) })),
      stalls: all('stall-card').map((card) => ({ workerId: card.dataset.workerId, title: text(q('stall-title', card)), detail: text(q('stall-detail', card)) })),
      timelines: all('timeline').map((tl) => ({
        workerId: tl.dataset.workerId,
        open: tl.open,
        svg: Boolean(q('timeline-svg', tl)),
        attempts: all('timeline-attempt', tl).map((a) => ({ reason: a.dataset.reason, outcome: a.dataset.outcome })),
        marks: all('timeline-mark', tl).length,
      })),
      dialog: Boolean(q('confirm-dialog')),
      message: text(q('action-status')),
    };
  });
}

/** The overlay on a conversation page: `{hosts, pill, drawer}` (nulls when absent). */
export function readOverlay(page) {
  return evaluate(page, () => {
    const hosts = document.querySelectorAll('orchestrator-overlay');
    const host = document.querySelector('[data-testid="overlay-host"]');
    const root = host?.shadowRoot ?? null;
    const q = (sel) => root?.querySelector(`[data-testid="${sel}"]`) ?? null;
    const text = (el) => (el ? el.textContent.trim() : null);
    const pill = q('overlay-pill');
    const drawer = q('overlay-drawer');
    return {
      hosts: hosts.length,
      pill: pill ? { status: pill.dataset.status, text: text(pill), expanded: pill.getAttribute('aria-expanded') } : null,
      drawer: drawer ? {
        status: q('overlay-status')?.dataset.status ?? null,
        statusText: text(q('overlay-status')),
        policy: text(q('overlay-policy')),
        question: text(q('overlay-question')),
        message: text(q('overlay-message')),
        buttons: [...drawer.querySelectorAll('button[data-testid^="overlay-action-"]')]
          .map((b) => ({ testid: b.dataset.testid, disabled: b.disabled })),
      } : null,
    };
  });
}

/**
 * What a click at the centre of the page's composer and send button would hit: for each,
 * whether the topmost element there is the control itself (or inside it), and what it is
 * otherwise. `block` scrolls the composer to the viewport's `end` (pinned at the bottom
 * as on chatgpt.com) or `start` first.
 */
export function hitTest(page, block = 'end') {
  return evaluate(page, (block) => {
    const composer = document.querySelector('#prompt-textarea');
    // The submit slot: Send, or on an idle real page the voice button that holds it.
    const send = document.querySelector('#composer-submit-button, button[aria-label="Start Voice"], button[data-composer-submit]');
    composer.closest('form').scrollIntoView({ block, inline: 'nearest' });
    const describe = (el) => (el ? `${el.tagName.toLowerCase()}${el.id ? `#${el.id}` : ''}${el.dataset?.testid ? `[${el.dataset.testid}]` : ''}` : 'nothing');
    const host = document.querySelector('orchestrator-overlay');
    const hostBox = host?.getBoundingClientRect();
    const inner = host?.shadowRoot ? [...host.shadowRoot.querySelectorAll('.box > *')].map((el) => el.getBoundingClientRect()) : [];
    const overlap = (a, b) => a.left < b.right && b.left < a.right && a.top < b.bottom && b.top < a.bottom;
    return Object.fromEntries(Object.entries({ composer, send }).map(([name, el]) => {
      const box = el.getBoundingClientRect();
      const x = box.left + box.width / 2;
      const y = box.top + box.height / 2;
      const hit = document.elementFromPoint(x, y);
      return [name, {
        at: [Math.round(x), Math.round(y)],
        inViewport: y >= 0 && y <= innerHeight && x >= 0 && x <= innerWidth,
        hitsControl: hit !== null && (hit === el || el.contains(hit)),
        hit: describe(hit),
        overlayOverlaps: inner.some((r) => overlap(r, box)),
        overlay: hostBox ? [Math.round(hostBox.left), Math.round(hostBox.top), Math.round(hostBox.width), Math.round(hostBox.height)] : null,
      }];
    }));
  }, block);
}
