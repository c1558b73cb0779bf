// Shared DOM helpers for the extension pages (popup, dashboard, settings): an element
// builder, the messages to the background, action buttons that call `ui.action` and
// report the daemon's answer, the in-page confirm dialog for destructive actions, and
// re-rendering that keeps keyboard focus and typed text in place.
import { actionErrorText } from './view.js';

export const api = globalThis.browser ?? globalThis.chrome;

/** `h('button', {class, text, onclick, 'data-testid': ...}, ...children)`. */
export function h(tag, props = {}, ...children) {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(props)) {
    if (v === null || v === undefined || v === false) continue;
    if (k === 'class') el.className = v;
    else if (k === 'text') el.textContent = v;
    else if (k === 'value') el.value = v;
    else if (k.startsWith('on')) el.addEventListener(k.slice(2), v);
    else el.setAttribute(k, v === true ? '' : String(v));
  }
  el.append(...children.flat().filter((c) => c !== null && c !== undefined && c !== false));
  return el;
}

/** A message to the background; a failure to deliver reads as `OFFLINE`. */
export async function send(message) {
  try {
    return (await api.runtime.sendMessage(message)) ?? { ok: false, error: { code: 'OFFLINE' } };
  } catch (e) {
    return { ok: false, error: { code: 'OFFLINE', message: String(e?.message ?? e) } };
  }
}

/**
 * Loads with `load()` now and after every `ui.changed` broadcast; broadcasts that arrive
 * during a load coalesce into one more load.
 */
export function watchState(load) {
  let running = false;
  let again = false;
  const run = async () => {
    if (running) { again = true; return; }
    running = true;
    try { await load(); } finally { running = false; }
    if (again) { again = false; run(); }
  };
  api.runtime.onMessage.addListener((message) => {
    if (message?.type === 'ui.changed') run();
  });
  run();
}

/**
 * Replaces `root`'s children, keeping focus and caret on the element with the same
 * `data-key`, and the open or closed state a person gave each keyed `<details>`.
 */
export function renderInto(root, nodes) {
  const active = document.activeElement;
  const key = root.contains(active) ? active?.dataset?.key : null;
  const caret = key && 'selectionStart' in active ? [active.selectionStart, active.selectionEnd] : null;
  const opened = new Map([...root.querySelectorAll('details[data-key]')].map((d) => [d.dataset.key, d.open]));
  root.replaceChildren(...nodes.flat().filter(Boolean));
  for (const d of root.querySelectorAll('details[data-key]')) if (opened.has(d.dataset.key)) d.open = opened.get(d.dataset.key);
  if (!key) return;
  const next = root.querySelector(`[data-key="${CSS.escape(key)}"]`);
  next?.focus({ preventScroll: true });
  if (next && caret) next.setSelectionRange(...caret);
}

let rerender = () => {};
let status = null;
let statusTimer = null;
const pending = new Set();
/** How long a confirmation ("Pause: done.") stays; errors stay until the next message. */
const STATUS_CLEAR_MS = 8_000;

/** Where action results are announced (a `role=status` element) and how to redraw. */
export function setup({ statusEl, redraw }) {
  status = statusEl;
  rerender = redraw;
}

/** Puts a short message in the page's live status line (a confirmation clears itself after a while). */
export function announce(text, tone = 'info') {
  if (!status) return;
  status.textContent = text;
  status.dataset.tone = tone;
  // The dashboard shows the line as a toast over the page: a confirmation must not sit on
  // the content for good.
  clearTimeout(statusTimer);
  if (tone !== 'error') statusTimer = setTimeout(() => { status.textContent = ''; }, STATUS_CLEAR_MS);
}

/**
 * A button that sends `ui.action`. `message` is the action message or a function
 * returning it (null: nothing to send). `confirm` ({title, body, confirmLabel}) asks
 * first and adds the typed reason as `text`. While the daemon answers, the button is busy.
 */
export function actionButton({ key, label, hint, destructive = false, primary = false, testid, message, confirm, done, small = false }) {
  const busy = pending.has(key);
  return h('button', {
    type: 'button',
    class: `btn${destructive ? ' danger' : ''}${primary ? ' primary' : ''}${small ? ' small' : ''}`,
    title: hint,
    'data-key': key,
    'data-testid': testid,
    'aria-busy': busy ? 'true' : null,
    disabled: busy,
    onclick: () => runAction({ key, label, message, confirm, done }),
  }, label);
}

async function runAction({ key, label, message, confirm, done }) {
  let msg = typeof message === 'function' ? message() : message;
  if (!msg) return;
  if (confirm) {
    const reason = await confirmDialog(confirm);
    if (reason === null) return;
    if (confirm.reason !== false) msg = { ...msg, text: reason };
  }
  pending.add(key);
  rerender();
  const result = await send({ type: 'ui.action', ...msg });
  pending.delete(key);
  if (result?.ok) {
    announce(`${label}: done.`);
    done?.();
  } else {
    announce(actionErrorText(result?.error), 'error');
  }
  rerender();
  // The busy button could not keep the focus: give it back.
  if (document.activeElement === document.body) document.querySelector(`[data-key="${CSS.escape(key)}"]`)?.focus();
}

/** A switch (`role=switch`) that sends `onMessage` or `offMessage` as a `ui.action`. */
export function actionSwitch({ key, label, checked, testid, onMessage, offMessage, hint, quietLabel = false }) {
  return actionToggle({
    key, label, checked, testid, hint, quietLabel, busy: pending.has(key),
    onToggle: () => runAction({ key, label, message: checked ? offMessage : onMessage }),
  });
}

/** A plain switch: a button with `role=switch`, its state in words as well as in shape. */
export function actionToggle({ key, label, checked, testid, hint, busy = false, quietLabel = false, onToggle }) {
  return h('button', {
    type: 'button', role: 'switch', class: 'switch', title: hint,
    'aria-checked': checked ? 'true' : 'false', 'aria-busy': busy ? 'true' : null, disabled: busy,
    'data-key': key, 'data-testid': testid, onclick: onToggle,
  },
  h('span', { class: quietLabel ? 'visually-hidden' : 'switch-label', text: label }),
  h('span', { class: 'switch-track', 'aria-hidden': 'true' }, h('span', { class: 'switch-thumb' })),
  h('span', { class: 'switch-state', text: checked ? 'On' : 'Off' }));
}

/**
 * The in-page confirm dialog for destructive actions. Resolves to the reason typed
 * (or a default one) when confirmed, null when cancelled. Cancel has the focus first.
 * With `reason: false` it asks for no reason and resolves to '' when confirmed.
 */
export function confirmDialog({ title, body, confirmLabel, reason: askReason = true }) {
  return new Promise((resolve) => {
    const reason = askReason && h('input', { type: 'text', id: 'confirm-reason', 'data-testid': 'confirm-reason', placeholder: 'Stopped by the operator', maxlength: '500' });
    const cancel = h('button', { type: 'button', class: 'btn', 'data-testid': 'confirm-cancel', onclick: () => dialog.close('cancel') }, 'Cancel');
    const accept = h('button', { type: 'button', class: 'btn danger solid', 'data-testid': 'confirm-accept', onclick: () => dialog.close('accept') }, confirmLabel);
    const dialog = h('dialog', { class: 'confirm', 'data-testid': 'confirm-dialog', 'aria-labelledby': 'confirm-title', 'aria-describedby': 'confirm-body' },
      h('h2', { id: 'confirm-title', text: title }),
      h('p', { id: 'confirm-body', text: body }),
      reason && h('label', { for: 'confirm-reason', text: 'Reason (optional)' }),
      reason,
      h('div', { class: 'actions' }, cancel, accept));
    dialog.addEventListener('close', () => {
      dialog.remove();
      if (dialog.returnValue !== 'accept') resolve(null);
      else resolve(reason ? reason.value.trim() || 'Stopped by the operator' : '');
    });
    document.body.append(dialog);
    dialog.showModal();
    cancel.focus();
  });
}

/** A status badge: glyph and word, coloured by tone (never by colour alone). */
export function statusBadge(status, testid = 'worker-status') {
  return h('span', { class: `badge tone-${status.tone}`, 'data-testid': testid, 'data-status': status.key },
    h('span', { class: 'glyph', 'aria-hidden': 'true', text: status.glyph }),
    h('span', { text: status.label }));
}

/** The connection badge (`data-status` is the background's connection status). */
export function connectionBadge(connection) {
  return h('span', { class: `conn tone-${connection.tone}`, 'data-testid': 'connection', 'data-status': connection.status },
    h('span', { class: 'glyph', 'aria-hidden': 'true', text: connection.glyph }),
    h('span', { text: connection.label }));
}

export function openDashboard(hash = '') {
  api.tabs.create({ url: api.runtime.getURL('src/ui/dashboard.html') + hash });
}

export function openSettings() {
  api.runtime.openOptionsPage();
}

/** Focuses the worker's managed tab when it has one, else opens the conversation in a new tab. */
export async function openConversation(tabs, workerId, url) {
  const tabId = Object.keys(tabs ?? {}).find((id) => tabs[id] === workerId);
  if (tabId !== undefined) {
    try {
      const tab = await api.tabs.update(Number(tabId), { active: true });
      await api.windows?.update(tab.windowId, { focused: true });
      return;
    } catch {
      // The tab is gone: fall back to the URL.
    }
  }
  if (url) api.tabs.create({ url });
}

/** The global "hide the overlay on ChatGPT tabs" preference (storage.local `ui.overlayHidden`). */
export async function overlayHidden() {
  const { ui } = await api.storage.local.get('ui');
  return Boolean(ui?.overlayHidden);
}

export async function setOverlayHidden(hidden) {
  const { ui } = await api.storage.local.get('ui');
  await api.storage.local.set({ ui: { ...ui, overlayHidden: hidden } });
}
