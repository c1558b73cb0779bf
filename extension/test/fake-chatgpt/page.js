// The fake ChatGPT page's behaviour (server.mjs serves it with page.html at / and /c/<uuid>).
// It reproduces what the content adapter meets on chatgpt.com, traps included: a ProseMirror-
// style composer whose Send stays disabled until an input event brings text, one submit slot
// that turns into Stop while generating, turns rendered from the server's record of the
// conversation, error cards with a Retry button, a URL that becomes /c/<uuid> after the first
// send, and an action bar that appears a moment after Stop goes away. Every button click is
// reported to the server; clicking Retry or Stop does nothing else. So is the moment a turn's
// action bar is first drawn (the page visibly idle), for latency measurements. Test commands
// (draft, clear-draft, break-ui, stale-stop, full) arrive over server-sent events.
'use strict';

const TICK_MS = 100;
const ACTION_BAR_DELAY_MS = 250;
const STREAMED_SHARE_MAX = 0.9;
const TEXT = {
  deliveryTimeout: 'Message delivery timed out. Please try again.',
  somethingWentWrong: 'Something went wrong. Please try again.',
  conversationFull: "You've reached the maximum length for this conversation.",
};

const thread = document.getElementById('thread');
const form = document.getElementById('composer-form');
const composer = document.getElementById('prompt-textarea');
const submitSlot = document.getElementById('composer-submit-button');

const state = {
  conversationId: /^\/c\/([\w-]+)\/?$/.exec(location.pathname)?.[1] ?? null,
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
  events: null,
  steerButton: null,
};
const articles = new Map(); // turn id -> {element, signature}
const drawnDone = new Set(); // ids of the assistant turns whose action bar was drawn

function element(tag, attributes = {}, ...children) {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(attributes)) node.setAttribute(name, value);
  node.append(...children);
  return node;
}

// Attribute writes only on change: an idle page makes no mutations.
function setAttribute(node, name, value) {
  if (node.getAttribute(name) !== value) node.setAttribute(name, value);
}

function setDisabled(button, disabled) {
  if (button.disabled !== disabled) button.disabled = disabled;
}

function setText(node, text) {
  if (node.textContent !== text) node.textContent = text;
}

function postJson(path, body) {
  return fetch(path, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body), keepalive: true })
    .then((response) => response.json());
}

// The composer's text with line breaks, whether the browser typed <p> blocks (Chromium) or
// <br>s (Firefox); a <br> that ends its block only keeps an empty line open.
function composerPlainText() {
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

function emptyParagraph() {
  return element('p', { 'data-placeholder': 'Ask anything', class: 'placeholder' }, element('br', { class: 'ProseMirror-trailingBreak' }));
}

function setComposerText(text) {
  composer.replaceChildren(...(text === '' ? [emptyParagraph()] : text.split('\n').map((line) => element('p', {}, line || element('br')))));
}

function canSend() {
  return state.sawInputWithText && composerPlainText().trim() !== '';
}

function assistantStatus(turn, now) {
  if (turn.interrupted) return 'interrupted';
  if (turn.endsAt === null || now < turn.endsAt) return 'generating';
  if (turn.error !== null) return 'failed';
  return now < turn.endsAt + ACTION_BAR_DELAY_MS ? 'settling' : 'done';
}

function activeTurn(now) {
  return state.turns.findLast((turn) => turn.role === 'assistant' && assistantStatus(turn, now) === 'generating') ?? null;
}

// The turns as shown: a failed send shows no reply ("something went wrong" sits on the user's
// turn, "conversation full" in a notice); a stale stop comes with a card on the latest turn.
function visibleTurns(now) {
  const views = [];
  for (const turn of state.turns) {
    if (turn.role === 'user') {
      views.push({ turn, error: null });
      continue;
    }
    const status = assistantStatus(turn, now);
    if (status === 'failed' && turn.error !== 'delivery_timeout') {
      const userView = views.findLast((view) => view.turn.role === 'user');
      if (turn.error === 'something_went_wrong' && userView) userView.error = TEXT.somethingWentWrong;
      continue;
    }
    views.push({ turn, status, error: status === 'failed' ? TEXT.deliveryTimeout : null });
  }
  const latest = views.at(-1);
  if (state.staleStop && latest && latest.error === null) latest.error = TEXT.somethingWentWrong;
  return views;
}

function errorRow(text) {
  return element('div', { class: 'flex items-center gap-2' },
    element('div', { class: 'text-token-text-error' }, text),
    element('button', { type: 'button', class: 'btn btn-secondary', 'data-testid': 'regenerate-thread-error-button' }, 'Retry'));
}

function markdown(text) {
  const paragraphs = text.split(/\n{2,}/).map((paragraph) => element('p', {}, ...paragraph.split('\n').flatMap((line, index) => (index === 0 ? [line] : [element('br'), line]))));
  return element('div', { class: 'markdown prose w-full break-words' }, ...paragraphs);
}

function shownReply(turn, status, now) {
  if (status === 'failed') return '';
  if (status !== 'generating') return turn.reply;
  if (turn.endsAt === null || turn.generateMs === 0) return '';
  const share = Math.min(1, Math.max(0, 1 - (turn.endsAt - now) / turn.generateMs)) * STREAMED_SHARE_MAX;
  return turn.reply.slice(0, Math.floor(turn.reply.length * share));
}

// What an article shows, as plain data: the article is rebuilt only when this changes.
function articleContent(view, now) {
  if (view.turn.role === 'user') return { role: 'user', text: view.turn.text, error: view.error };
  const { turn, status } = view;
  const workedSeconds = status === 'generating' && turn.endsAt !== null
    ? Math.floor((now - (turn.endsAt - turn.generateMs)) / 1000) : null;
  return { role: 'assistant', status, reply: shownReply(turn, status, now), error: view.error, workedSeconds };
}

function buildArticle(turn, content) {
  if (content.role === 'user') {
    return [
      element('h5', { class: 'sr-only' }, 'You said:'),
      element('div', { 'data-message-author-role': 'user', 'data-message-id': turn.id }, element('div', { class: 'whitespace-pre-wrap' }, content.text)),
      ...(content.error ? [errorRow(content.error)] : []),
    ];
  }
  const message = element('div', { 'data-message-author-role': 'assistant', 'data-message-id': turn.id });
  if (content.reply !== '') message.append(markdown(content.reply));
  if (content.error) message.append(errorRow(content.error));
  return [
    element('h6', { class: 'sr-only' }, 'ChatGPT said:'),
    ...(content.status === 'generating' ? [element('div', { class: 'text-token-text-secondary' },
      content.workedSeconds === null ? 'Thinking' : `Worked for ${content.workedSeconds}s`,
      element('button', { type: 'button', 'aria-label': 'Skip thinking' }, 'Skip'))] : []),
    message,
    ...(content.status === 'done' ? [element('div', { class: 'flex turn-actions' },
      element('button', { type: 'button', 'data-testid': 'copy-turn-action-button', 'aria-label': 'Copy' }, 'Copy'),
      element('button', { type: 'button', 'data-testid': 'good-response-turn-action-button', 'aria-label': 'Good response' }, 'Good'))] : []),
  ];
}

function renderThread(now) {
  const views = visibleTurns(now);
  views.forEach((view, index) => {
    let entry = articles.get(view.turn.id);
    if (!entry) {
      entry = { element: element('article', { class: 'w-full', 'data-turn-id': view.turn.id }), signature: null };
      articles.set(view.turn.id, entry);
    }
    setAttribute(entry.element, 'data-testid', `conversation-turn-${index + 1}`);
    setAttribute(entry.element, 'data-turn', view.turn.role);
    const content = articleContent(view, now);
    const signature = JSON.stringify(content);
    if (entry.signature !== signature) {
      entry.element.replaceChildren(...buildArticle(view.turn, content));
      entry.signature = signature;
    }
    if (thread.children[index] !== entry.element) thread.insertBefore(entry.element, thread.children[index] ?? null);
    if (content.status === 'done') reportDrawnDone(view.turn);
  });
  const shown = new Set(views.map((view) => view.turn.id));
  for (const [id, entry] of articles) {
    if (!shown.has(id)) {
      entry.element.remove();
      articles.delete(id);
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

function renderFullNotice(now) {
  const full = state.full || state.fullNotice
    || state.turns.some((turn) => turn.role === 'assistant' && turn.error === 'conversation_full' && assistantStatus(turn, now) === 'failed');
  const notice = document.getElementById('conversation-full-notice');
  if (full && !notice) form.before(element('div', { id: 'conversation-full-notice', role: 'status' }, TEXT.conversationFull));
  if (!full && notice) notice.remove();
}

// One submit slot that is Send or Stop; a steerable turn adds a second, separate Send.
function renderComposer(now) {
  if (state.uiBroken) {
    form.remove();
    return;
  }
  const active = activeTurn(now);
  const busy = active !== null || state.staleStop;
  const steerable = active !== null && active.steerable && !state.staleStop;
  setAttribute(composer, 'contenteditable', !busy || steerable ? 'true' : 'false');
  if (busy) {
    setAttribute(submitSlot, 'data-testid', 'stop-button');
    setAttribute(submitSlot, 'aria-label', 'Stop streaming');
    setText(submitSlot, '\u25A0');
    setDisabled(submitSlot, false);
  } else {
    setAttribute(submitSlot, 'data-testid', 'send-button');
    setAttribute(submitSlot, 'aria-label', 'Send prompt');
    setText(submitSlot, '\u2191');
    setDisabled(submitSlot, !canSend());
  }
  if (steerable && state.steerButton === null) {
    state.steerButton = element('button', { type: 'button', 'data-testid': 'send-button', 'aria-label': 'Send prompt' }, '\u2191');
    submitSlot.before(state.steerButton);
  } else if (!steerable && state.steerButton !== null) {
    state.steerButton.remove();
    state.steerButton = null;
  }
  if (state.steerButton !== null) setDisabled(state.steerButton, !canSend());
}

function render() {
  const now = performance.now();
  renderThread(now);
  renderFullNotice(now);
  renderComposer(now);
}

function applySnapshot(snapshot) {
  if (snapshot.id !== state.conversationId || snapshot.version <= state.version) return;
  const now = performance.now();
  state.version = snapshot.version;
  state.full = snapshot.full;
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
  const steer = activeTurn(performance.now()) !== null;
  setComposerText('');
  state.sawInputWithText = false;
  showOptimistically(text, steer);
  render();
  const answer = await postJson('/__fake/turn', { conversationId: state.conversationId, text, steer });
  if (state.conversationId === null) {
    state.conversationId = answer.conversationId;
    history.pushState(null, '', `/c/${answer.conversationId}`);
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
  render();
});

document.addEventListener('click', (event) => {
  const button = event.target.closest?.('button');
  if (!button) return;
  const testid = button.getAttribute('data-testid');
  void postJson('/__fake/click', { conversationId: state.conversationId, testid, label: button.getAttribute('aria-label') || button.textContent.trim() });
  if (testid === 'send-button' && !button.disabled && canSend()) void sendPrompt();
}, true);

subscribe();
render();
setInterval(render, TICK_MS);
