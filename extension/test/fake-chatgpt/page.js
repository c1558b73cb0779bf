// The fake ChatGPT page's behaviour (server.mjs serves it with page.html at /, /c/<uuid> and
// /uc/<id>). The markup is the layout profile's (globalThis.FakeChatGPTLayout, from
// layouts/<name>.js, loaded just before this script); this file is what every layout shares:
// turns rendered from the server's record of the conversation (a row per turn, or per
// exchange of a prompt and its answer where the layout groups them), a Send that exists or enables
// only once an input event brought text, one submit slot that turns into Stop while
// generating, error cards with a Retry control, a URL that becomes the layout's conversation
// address after the first send, and an action bar (or completion mark) drawn a moment after
// Stop goes away. Every button click is reported to the server with the control it is (send,
// stop, retry, ...); clicking Retry or Stop does nothing else. So is the moment a turn's
// action bar is first drawn (the page visibly idle), for latency measurements. Test commands
// (draft, clear-draft, break-ui, stale-stop, full, attach, quote, clear-attachments, inject,
// uninject) arrive over server-sent events. A person's additions beside the editor (a file
// uploading, with Send disabled until it is done; a file; an image; a quoted reply) are drawn
// as tiles at the start of the composer's form: a file is a group named by its name with a
// "Remove file <name>" button (miuuyy/codex-chatgpt-web, 2026-07-30; SOURCES.md section 8);
// the progress ring, the image tile's inner button and the quote are INFERRED.
// `inject` draws a test's own element (a control or card no real page shows) in the latest
// turn's row, in the composer's dock or in its form, and keeps it there across redraws. The
// `@` app picker, the app's pill and the tool-approval card are page-apps.js's.
'use strict';

const TICK_MS = 100;
const ACTION_BAR_DELAY_MS = 250;
const STREAMED_SHARE_MAX = 0.9;
const DELIVERY_TIMEOUT_TEXT = 'Message delivery timed out. Please try again.';

const layout = globalThis.FakeChatGPTLayout;
if (!layout) throw new Error('fake ChatGPT: no layout script ran before page.js');

// The control each button the layouts drew is (send, steer, stop, retry, voice, ...): what a
// click on it is reported as, whatever its markup.
const controls = new WeakMap();

function element(tag, attributes = {}, ...children) {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(attributes)) {
    if (value !== false && value !== null && value !== undefined) node.setAttribute(name, value === true ? '' : value);
  }
  node.append(...children);
  return node;
}

// Attribute writes only on change: an idle page makes no mutations. `null` removes.
function setAttribute(node, name, value) {
  if (value === null) {
    if (node.hasAttribute(name)) node.removeAttribute(name);
  } else if (node.getAttribute(name) !== value) {
    node.setAttribute(name, value);
  }
}

function setDisabled(button, disabled) {
  if (button.disabled !== disabled) button.disabled = disabled;
}

function setText(node, text) {
  if (node.textContent !== text) node.textContent = text;
}

function control(node, name) {
  controls.set(node, name);
  return node;
}

// Paragraphs of a reply, with <br> for single line breaks.
function paragraphs(text, attributes = () => ({})) {
  return text.split(/\n{2,}/).map((paragraph, index) => element('p', attributes(index),
    ...paragraph.split('\n').flatMap((line, at) => (at === 0 ? [line] : [element('br'), line]))));
}

const ui = Object.freeze({ element, setAttribute, setDisabled, setText, control, paragraphs });
document.title = layout.title;
const shell = layout.shell(ui);
const { form, composer } = shell;
const slot = layout.slot(shell, ui);
const texts = { deliveryTimeout: DELIVERY_TIMEOUT_TEXT, ...layout.texts };

const state = {
  conversationId: layout.pathPattern.exec(location.pathname)?.[1] ?? null,
  version: -1,
  full: false,
  // user: {id, role, text}; assistant: {id, role, reply, error, steerable, generateMs, endsAt}
  // where endsAt (performance.now() time) is null while the server has no plan yet, and
  // interrupted marks the part of a reply streamed before a steering prompt.
  turns: [],
  sawInputWithText: false,
  staleStop: false,
  fullNotice: false,
  uiBroken: false,
  // The scripted tool call waiting for approval: {app, tool, variant, stop, warning}, or null.
  approval: null,
  // A person's additions beside the editor: [{kind: 'uploading' | 'file' | 'image' | 'quote', text}].
  attachments: [],
  // A test's own element: {where: 'turn' | 'composer' | 'form', node}, or null.
  injected: null,
  events: null,
};
const rows = new Map(); // row id (a turn's, or an exchange's user turn's) -> {element, signature}
const drawnDone = new Set(); // ids of the assistant turns whose action bar was drawn

function postJson(path, body) {
  return fetch(path, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body), keepalive: true })
    .then((response) => response.json());
}

const apps = globalThis.FakeChatGPTApps.create({
  composer, form, ui, postJson, conversationId: () => state.conversationId, pillShape: layout.pillShape ?? 'plugin',
  changed: () => {
    state.sawInputWithText = composerPlainText().trim() !== '';
    render();
  },
});

// ---- The composer: a ProseMirror-style contenteditable or a textarea ----

// The composer's text with line breaks, whether the browser typed <p> blocks (Chromium) or
// <br>s (Firefox); a <br> that ends its block only keeps an empty line open.
function composerPlainText() {
  if (composer.tagName === 'TEXTAREA') return composer.value;
  const lines = [];
  let line = null;
  const endLine = () => {
    lines.push(line ?? '');
    line = null;
  };
  const visit = (node) => {
    for (const child of node.childNodes) {
      if (child.nodeType === Node.TEXT_NODE) {
        line = (line ?? '') + child.data;
      } else if (apps.isPill(child)) {
        // The chosen app travels with the prompt, not as its text.
      } else if (child.nodeName === 'BR') {
        if (child.nextSibling !== null) {
          endLine();
          line = '';
        }
      } else if (child.nodeName === 'P' || child.nodeName === 'DIV') {
        if (line !== null) endLine();
        visit(child);
        endLine();
      } else {
        visit(child);
      }
    }
  };
  visit(composer);
  if (line !== null) endLine();
  return lines.join('\n');
}

function setComposerText(text) {
  if (composer.tagName === 'TEXTAREA') {
    composer.value = text;
    return;
  }
  composer.replaceChildren(...(text === ''
    ? [element('p', { 'data-placeholder': 'Ask anything', class: 'placeholder' }, element('br', { class: 'ProseMirror-trailingBreak' }))]
    : text.split('\n').map((line) => element('p', {}, line || element('br')))));
}

function canSend() {
  return state.sawInputWithText && composerPlainText().trim() !== '' && !state.attachments.some((a) => a.kind === 'uploading');
}

// ---- A person's additions beside the editor (tiles before the editor; partly INFERRED) ----

const extras = element('div', { class: 'flex flex-wrap gap-2', 'data-fake-composer-extras': '' });
form.prepend(extras);
const removeButton = (label) => element('button', { type: 'button', 'aria-label': label, class: 'rounded-full' },
  document.createElementNS('http://www.w3.org/2000/svg', 'svg'));

function attachmentTile({ kind, text }) {
  switch (kind) {
    case 'uploading': return element('div', { role: 'group', 'aria-label': text, 'aria-busy': 'true', class: 'file-tile' },
      element('div', { role: 'progressbar', 'aria-valuenow': '40', 'aria-valuemin': '0', 'aria-valuemax': '100' }),
      element('span', { class: 'truncate' }, text), removeButton(`Remove file ${text}`));
    case 'file': return element('div', { role: 'group', 'aria-label': text, class: 'file-tile' }, element('span', { class: 'truncate' }, text),
      element('span', { class: 'text-xs' }, 'PDF'), removeButton(`Remove file ${text}`));
    case 'image': return element('div', { role: 'group', 'aria-label': text, class: 'file-tile' }, element('button', { type: 'button', class: 'overflow-hidden' },
      element('img', { alt: text, width: '56', height: '56', src: 'data:image/gif;base64,R0lGODlhAQABAAAAACw=' })), removeButton(`Remove file ${text}`));
    case 'quote': return element('div', { class: 'flex items-start gap-2' }, element('blockquote', { class: 'line-clamp-2' }, text), removeButton('Remove quote'));
    default: throw new Error(`unknown attachment kind ${kind}`);
  }
}

function renderExtras() {
  const signature = JSON.stringify(state.attachments);
  if (extras.dataset.signature === signature) return;
  extras.dataset.signature = signature;
  extras.replaceChildren(...state.attachments.map(attachmentTile));
}

// The test's own element, put back where it belongs after every redraw.
function renderInjected() {
  const injected = state.injected;
  if (injected === null) return;
  let parent = null;
  if (injected.where === 'turn') parent = [...rows.values()].at(-1)?.element ?? null;
  else if (injected.where === 'composer') parent = form.parentElement;
  else parent = form;
  if (parent === null) return;
  if (injected.node.parentElement !== parent) {
    if (injected.where === 'composer') parent.insertBefore(injected.node, form);
    else if (injected.where === 'form') parent.prepend(injected.node);
    else parent.append(injected.node);
  }
}

// ---- Turns ----

function assistantStatus(turn, now) {
  if (turn.interrupted) return 'interrupted';
  if (turn.endsAt === null || now < turn.endsAt) return 'generating';
  if (turn.error !== null) return 'failed';
  return now < turn.endsAt + ACTION_BAR_DELAY_MS ? 'settling' : 'done';
}

function activeTurn(now) {
  return state.turns.findLast((turn) => turn.role === 'assistant' && assistantStatus(turn, now) === 'generating') ?? null;
}

const errorOf = (kind) => ({ kind, text: texts[{ delivery_timeout: 'deliveryTimeout', something_went_wrong: 'somethingWentWrong', conversation_full: 'conversationFull' }[kind]] });

// The turns as shown. Legacy: a failed send shows no reply ("something went wrong" sits on
// the user's turn, "conversation full" in a page notice). The real layouts draw each failure
// as the assistant turn's card, as their fixtures show. A stale stop comes with a "something
// went wrong" card on the latest turn; the maximum-length notice of the real layouts is a
// card in the latest assistant turn.
function visibleTurns(now) {
  const views = [];
  for (const turn of state.turns) {
    if (turn.role === 'user') {
      views.push({ turn, error: null });
      continue;
    }
    const status = assistantStatus(turn, now);
    if (status === 'failed' && layout.failedSendOnUserTurn && turn.error !== 'delivery_timeout') {
      const userView = views.findLast((view) => view.turn.role === 'user');
      if (turn.error === 'something_went_wrong' && userView) userView.error = errorOf('something_went_wrong');
      continue;
    }
    views.push({ turn, status, error: status === 'failed' ? errorOf(turn.error) : null });
  }
  const latest = views.at(-1);
  if (state.staleStop && latest && latest.error === null) latest.error = errorOf('something_went_wrong');
  if (layout.fullNotice === 'turn' && pageFull(now)) {
    const lastAssistant = views.findLast((view) => view.turn.role === 'assistant');
    if (lastAssistant && lastAssistant.error?.kind !== 'conversation_full') lastAssistant.full = texts.conversationFull;
  }
  return views;
}

function shownReply(turn, status, now) {
  if (status === 'failed') return '';
  if (status !== 'generating') return turn.reply;
  if (turn.endsAt === null || turn.generateMs === 0) return '';
  const share = Math.min(1, Math.max(0, 1 - (turn.endsAt - now) / turn.generateMs)) * STREAMED_SHARE_MAX;
  return turn.reply.slice(0, Math.floor(turn.reply.length * share));
}

// What a turn shows, as plain data: its row is rebuilt only when this changes.
function rowContent(view, index, now) {
  const base = { id: view.turn.id, index, conversationId: state.conversationId };
  if (view.turn.role === 'user') return { ...base, role: 'user', text: view.turn.text, error: view.error };
  const { turn, status } = view;
  const workedSeconds = status === 'generating' && turn.endsAt !== null
    ? Math.floor((now - (turn.endsAt - turn.generateMs)) / 1000) : null;
  return { ...base, role: 'assistant', status, reply: shownReply(turn, status, now), error: view.error, full: view.full ?? null, workedSeconds };
}

// The rows the layout draws, each {id, content, turnIds}: one per turn, or, for a layout
// with `exchanges` (the app shell), one per exchange: a user's turn and the answer after it,
// as {id, index, user, answer, latest} under the user's turn id.
function rowsOf(views, now) {
  const contents = views.map((view, index) => rowContent(view, index, now));
  if (!layout.exchanges) return contents.map((content) => ({ id: content.id, content, turnIds: [content.id] }));
  const exchanges = [];
  for (const content of contents) {
    const open = exchanges.at(-1);
    if (content.role === 'assistant' && open !== undefined && open.content.answer === null) {
      open.content.answer = content;
      open.turnIds.push(content.id);
      continue;
    }
    const user = content.role === 'user' ? content : null;
    exchanges.push({ id: content.id, content: { id: content.id, index: exchanges.length, user, answer: user === null ? content : null, latest: false }, turnIds: [content.id] });
  }
  if (exchanges.length > 0) exchanges.at(-1).content.latest = true;
  return exchanges;
}

function renderThread(now) {
  const views = visibleTurns(now);
  const list = views.length === 0 ? shell.list(false) : shell.list(true);
  const drawn = rowsOf(views, now);
  const rowOfTurn = new Map();
  drawn.forEach(({ id, content, turnIds }, index) => {
    const signature = JSON.stringify(content);
    let entry = rows.get(id);
    if (!entry || entry.signature !== signature) {
      const fresh = layout.row(content, ui);
      entry?.element.replaceWith(fresh);
      entry = { element: fresh, signature };
      rows.set(id, entry);
    }
    if (list.children[index] !== entry.element) list.insertBefore(entry.element, list.children[index] ?? null);
    for (const turnId of turnIds) rowOfTurn.set(turnId, entry.element);
  });
  for (const view of views) if (view.status === 'done') reportDrawnDone(view.turn);
  const latestAssistant = views.findLast((view) => view.turn.role === 'assistant');
  apps.renderCard(state.approval, latestAssistant ? rowOfTurn.get(latestAssistant.turn.id) : null);
  const shown = new Set(drawn.map((row) => row.id));
  for (const [id, entry] of rows) {
    if (!shown.has(id)) {
      entry.element.remove();
      rows.delete(id);
    }
  }
}

// The wall-clock time the page first drew a turn's action bar, which is when the content
// script can first read the turn as idle; a turn ends on this page's timer, which a browser
// stretches in a background tab, so the server's planned end can be well before it.
function reportDrawnDone(turn) {
  if (drawnDone.has(turn.id)) return;
  drawnDone.add(turn.id);
  void postJson('/__fake/drawn-done', { conversationId: state.conversationId, turnId: turn.id, atMs: Date.now() });
}

function pageFull(now) {
  return state.full || state.fullNotice
    || state.turns.some((turn) => turn.role === 'assistant' && turn.error === 'conversation_full' && assistantStatus(turn, now) === 'failed');
}

// The legacy layout's page-level notice (the real layouts draw it in the latest turn).
function renderFullNotice(now) {
  if (layout.fullNotice !== 'page') return;
  const full = pageFull(now);
  const notice = document.getElementById('conversation-full-notice');
  if (full && !notice) form.before(element('div', { id: 'conversation-full-notice', role: 'status' }, texts.conversationFull));
  if (!full && notice) notice.remove();
}

function renderComposer(now) {
  if (state.uiBroken) {
    form.remove();
    return;
  }
  const active = activeTurn(now);
  // A card shown without a Stop control (the notes leave both possible) makes the page look idle.
  const busy = (active !== null || state.staleStop) && state.approval?.stop !== false;
  const steerable = active !== null && active.steerable && !state.staleStop;
  if (layout.lockComposerWhileBusy) setAttribute(composer, 'contenteditable', !busy || steerable ? 'true' : 'false');
  slot.update({ busy, steerable, hasText: canSend(), conversationId: state.conversationId });
}

function render() {
  const now = performance.now();
  renderThread(now);
  renderFullNotice(now);
  renderExtras();
  renderComposer(now);
  renderInjected();
}

function applySnapshot(snapshot) {
  if (snapshot.id !== state.conversationId || snapshot.version <= state.version) return;
  const now = performance.now();
  state.version = snapshot.version;
  state.full = snapshot.full;
  state.approval = snapshot.approval ?? null;
  state.turns = snapshot.turns.map((turn) => (turn.role === 'user' ? turn : {
    ...turn, endsAt: turn.remainingMs === null ? null : now + turn.remainingMs,
  }));
  render();
}

// The real page shows the prompt (and a pending reply) at once, before the server answers.
function showOptimistically(text, steer) {
  const userTurn = { id: `local-${crypto.randomUUID()}`, role: 'user', text };
  const active = steer ? activeTurn(performance.now()) : null;
  if (active !== null) {
    const interruptedPart = { id: `local-${crypto.randomUUID()}`, role: 'assistant', reply: '', error: null, steerable: false, generateMs: 0, endsAt: 0, interrupted: true };
    state.turns.splice(state.turns.indexOf(active), 0, interruptedPart, userTurn);
  } else {
    state.turns.push(userTurn, { id: `local-${crypto.randomUUID()}`, role: 'assistant', reply: '', error: null, steerable: false, generateMs: null, endsAt: null });
  }
}

async function sendPrompt() {
  const text = composerPlainText().trim();
  state.attachments = [];
  const steer = activeTurn(performance.now()) !== null;
  const app = apps.chosen();
  apps.clearPill();
  setComposerText('');
  state.sawInputWithText = false;
  showOptimistically(text, steer);
  render();
  const answer = await postJson('/__fake/turn', { conversationId: state.conversationId, text, steer, app });
  if (state.conversationId === null) {
    state.conversationId = answer.conversationId;
    history.pushState(null, '', layout.conversationPath(answer.conversationId));
    subscribe();
  }
  applySnapshot(answer.conversation);
}

function applyControl(command) {
  if (command.startsWith('draft:')) {
    setComposerText(command.slice('draft:'.length));
    composer.dispatchEvent(new InputEvent('input', { inputType: 'insertText', bubbles: true }));
  } else if (command === 'clear-draft') {
    setComposerText('');
    composer.dispatchEvent(new InputEvent('input', { inputType: 'deleteContentBackward', bubbles: true }));
  } else if (command === 'break-ui') {
    state.uiBroken = true;
  } else if (command === 'stale-stop') {
    state.staleStop = true;
  } else if (command === 'full') {
    state.fullNotice = true;
  } else if (command.startsWith('attach:')) {
    const [, kind, ...text] = command.split(':');
    state.attachments = [...state.attachments, { kind, text: text.join(':') }];
  } else if (command.startsWith('quote:')) {
    state.attachments = [...state.attachments, { kind: 'quote', text: command.slice('quote:'.length) }];
  } else if (command === 'upload-done') {
    state.attachments = state.attachments.map((a) => (a.kind === 'uploading' ? { ...a, kind: 'file' } : a));
  } else if (command === 'clear-attachments') {
    state.attachments = [];
  } else if (command.startsWith('inject:')) {
    const [, where, ...html] = command.split(':');
    if (!['turn', 'composer', 'form'].includes(where)) throw new Error(`inject: no place ${where}`);
    state.injected?.node.remove();
    const template = document.createElement('template');
    template.innerHTML = html.join(':');
    const node = template.content.firstElementChild;
    if (node === null) throw new Error('inject: no element in the HTML');
    node.setAttribute('data-fake-injected', '');
    state.injected = { where, node };
  } else if (command === 'uninject') {
    state.injected?.node.remove();
    state.injected = null;
  } else {
    throw new Error(`unknown control command ${command}`);
  }
  render();
}

function subscribe() {
  state.events?.close();
  state.events = new EventSource(`/__fake/events?c=${encodeURIComponent(state.conversationId ?? 'new')}`);
  state.events.addEventListener('state', (event) => applySnapshot(JSON.parse(event.data)));
  state.events.addEventListener('control', (event) => {
    const { id, command } = JSON.parse(event.data);
    let ack;
    try {
      applyControl(command);
      ack = { id, ok: true };
    } catch (error) {
      ack = { id, ok: false, error: String(error?.message ?? error) };
    }
    void postJson('/__fake/ack', ack);
  });
}

composer.addEventListener('input', () => {
  state.sawInputWithText = composerPlainText().trim() !== '';
  apps.onInput(composerPlainText);
  render();
});

// A submit button submits its form: the page sends from the click, never by navigating.
form.addEventListener('submit', (event) => event.preventDefault());

document.addEventListener('click', (event) => {
  const button = event.target.closest?.('button');
  if (!button) return;
  const name = controls.get(button) ?? null;
  void postJson('/__fake/click', {
    conversationId: state.conversationId,
    control: name,
    testid: button.getAttribute('data-testid'),
    label: button.getAttribute('aria-label') || button.textContent.trim(),
    // A script's click (the adapter's `.click()`) is untrusted; a person's (the test driver's) is trusted.
    trusted: event.isTrusted,
  });
  const enabled = !button.disabled && button.getAttribute('aria-disabled') !== 'true';
  if ((name === 'send' || name === 'steer') && enabled && canSend()) void sendPrompt();
}, true);

subscribe();
render();
setInterval(render, TICK_MS);
