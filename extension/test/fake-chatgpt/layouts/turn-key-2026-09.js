// The turn-key-2026-09 layout of the fake page (the signed-in "app shell"): markup as in
// test/fixtures/pages/turn-key-2026-09/*.html (all derived from dated live notes of
// 2026-09-24 to 2026-10-09; SOURCES.md names them). One exchange
// `div[data-turn-key=<user message id>] > div[data-content-search-turn-key]` holds the user's
// unit (`…:user`, its bubble and its own Copy/Edit bar) and the answer's unit (`…:assistant`,
// `h4.sr-only[data-conversation-role]`, the `[data-markdown-text-style]` root), then the
// answer's `.turn-action-controls` after the unit, inside the exchange, once it settled
// (idle.html). Until the first words the exchange holds only the user's unit and a busy
// status line (streaming-before-answer.html, live 2026-10-07). A failed turn shows no answer
// unit, only an `aside[role="alert"]` with its Retry (error-network.html); the maximum-length
// notice is a `div[role="alert"]` with "Start new chat" after the answer
// (conversation-full.html). The composer is `form[data-chatgpt-composer]` with a ProseMirror
// editor without id or test id; the submit slot is `button[type=submit][aria-label=Send]`
// (no test id; disabled while the composer is empty: INFERRED, as in the fixtures' header),
// and while generating `button[type=button][aria-label=Stop]` with the rounded-square glyph
// (generating.html). Conversations live at /c/<id> (signed in: the sidebar lists them). The
// chosen app shows as the October 2026 mention (`span[app-mention-path="app://…"]
// [app-mention-display-name][contenteditable=false]`, live traces of 2026-10-06 in
// thaiGO2003/omp-codex-web-stability): the app shell of that month. Classic script.
'use strict';

globalThis.FakeChatGPTLayout = (() => {
  // Chat titles in the sidebar quote page-state texts on purpose: titles are written by
  // people and the model, and must never read as a challenge, an error or a full conversation.
  const SIDEBAR_TITLES = ['Verify you are human', 'You’ve reached the maximum length for this conversation.', 'Something went wrong. Please try again.'];
  const STOP_GLYPH = 'M4.5 5.75C4.5 5.05964 5.05964 4.5 5.75 4.5H14.25C14.9404 4.5 15.5 5.05964 15.5 5.75V14.25C15.5 14.9404 14.9404 15.5 14.25 15.5H5.75C5.05964 15.5 4.5 14.9404 4.5 14.25V5.75Z';
  const svg = (path = null, className = null) => {
    const node = document.createElementNS('http://www.w3.org/2000/svg', 'svg');
    node.setAttribute('aria-hidden', 'true');
    if (className !== null) node.setAttribute('class', className);
    const shape = document.createElementNS('http://www.w3.org/2000/svg', 'path');
    if (path !== null) shape.setAttribute('d', path);
    node.append(shape);
    return node;
  };

  // new-chat.html, idle.html: the sidebar, the timeline scroller around the exchange list, the
  // composer form below it.
  function shell({ element }) {
    const list = element('div', { class: 'flex flex-col', 'data-thread-find-target': 'conversation' });
    const composer = element('div', { contenteditable: 'true', translate: 'no', class: 'ProseMirror', role: 'textbox', 'aria-label': 'Ask ChatGPT', 'data-composer-markdown': '' },
      element('p', { 'data-placeholder': 'Ask anything', class: 'placeholder' }, element('br', { class: 'ProseMirror-trailingBreak' })));
    const form = element('form', { 'data-chatgpt-composer': '', 'data-thread-find-composer': 'true' },
      element('div', { 'data-composer-input-variant': 'default' }, composer),
      element('button', { type: 'button', 'aria-label': 'Add files and more', 'data-composer-navigation-target': 'add-context' }, svg()));
    const nav = element('nav', { 'aria-label': 'Chat history' },
      element('div', { 'data-app-action-sidebar-scroll': '', class: 'overflow-y-auto' },
        element('a', { href: '/', 'data-testid': 'create-new-chat-button' }, 'New chat'),
        ...SIDEBAR_TITLES.map((title, index) => element('a', { href: `/c/00000000-0000-4000-8000-00000000000${index + 1}` }, title))));
    const main = element('main', {},
      element('div', { 'data-app-action-timeline-scroll': '', role: 'presentation', class: 'thread-scroll-container overflow-x-hidden overflow-y-auto', style: 'display:flex;flex-direction:column-reverse' }, list),
      element('div', { id: 'thread-bottom-container' }, form));
    document.body.prepend(nav, main);
    return { form, composer, list: () => list };
  }

  // The submit slot: a disabled Send on an empty composer (INFERRED: new-chat.html's header),
  // an enabled one once an input event brought text (draft.html), Stop while generating
  // (generating.html). While a steerable turn generates, a second Send stands before Stop: a
  // TEST AFFORDANCE for the adapter's steering path; no source shows a mid-turn send here.
  function slot({ form }, { element, setDisabled, control }) {
    let shown = null;
    let current = null;
    let steer = null;
    const sendButton = () => control(element('button', { type: 'submit', 'aria-label': 'Send', class: 'size-token-button-composer' }, svg(null, 'icon-primary-action')), 'send');
    const stopButton = () => control(element('button', { type: 'button', 'aria-label': 'Stop', class: 'size-token-button-composer' }, svg(STOP_GLYPH, 'icon-primary-action')), 'stop');
    return {
      update({ busy, steerable, hasText }) {
        const mode = busy ? (steerable ? 'stop+steer' : 'stop') : 'send';
        if (mode !== shown) {
          shown = mode;
          const next = busy ? stopButton() : sendButton();
          if (current === null) form.append(next);
          else current.replaceWith(next);
          current = next;
          steer?.remove();
          steer = null;
          if (steerable) {
            steer = control(element('button', { type: 'button', 'aria-label': 'Send', class: 'size-token-button-composer' }, svg(null, 'icon-primary-action')), 'steer');
            current.before(steer);
          }
        }
        if (!busy) setDisabled(current, !hasText);
        if (steer !== null) setDisabled(steer, !hasText);
      },
    };
  }

  const exchangeKey = (content) => `fallback-turn-${content.index + 1}`;

  // The user's unit with its own bar (Copy message, Edit message: idle.html).
  function userUnit({ element }, content, key) {
    return element('div', { 'data-chatgpt-search-unit-key': `${key}:0:user`, 'data-chatgpt-search-message-ids': content.id },
      element('div', { 'data-content-search-unit-key': `${key}:0:user` },
        element('div', { 'data-user-message-bubble': 'true' }, element('div', { class: 'text-size-chat whitespace-pre-wrap' }, content.text))),
      element('div', { class: 'turn-action-controls' },
        element('button', { type: 'button', 'aria-label': 'Copy message' }, svg()),
        element('button', { type: 'button', 'aria-label': 'Edit message' }, svg())));
  }

  // The answer's unit: its role heading and its markdown root (idle.html, generating.html).
  function answerUnit({ element, paragraphs }, content, key) {
    return element('div', { 'data-chatgpt-search-unit-key': `${key}:2:assistant`, 'data-content-search-unit-key': `${key}:2:assistant`, 'data-chatgpt-search-message-ids': `${content.id} ${content.id}` },
      element('h4', { class: 'sr-only', 'data-conversation-role': 'assistant' }, 'ChatGPT said:'),
      element('div', { 'data-chatgpt-selection-message-id': content.id },
        element('div', { class: 'MarkdownRoot-rZKhxa', 'data-markdown-text-style': 'assistant-message' }, ...(content.reply === '' ? [] : paragraphs(content.reply)))));
  }

  // The answer's bar after its unit, inside the exchange (idle.html; live 2026-09-28).
  function answerBar({ element, control }) {
    return element('div', { class: 'turn-action-controls' },
      control(element('button', { type: 'button', 'aria-label': 'Copy' }, svg()), 'copy'),
      control(element('button', { type: 'button', 'aria-label': 'Good response' }, svg()), 'good'),
      control(element('button', { type: 'button', 'aria-label': 'Bad response' }, svg()), 'bad'),
      element('button', { type: 'button', 'aria-label': 'Switch model', 'aria-haspopup': 'menu' }, svg()),
      element('button', { type: 'button', 'aria-label': 'More actions', 'aria-haspopup': 'menu' }, svg()));
  }

  // error-network.html: the alert with Retry and no Stop. The delivery timeout and "something
  // went wrong" are drawn as this alert too, with the other signed-in layouts' words
  // (INFERRED: the sources show this alert only with the server's network texts, which the
  // adapter reads as a connection failure); the maximum-length alert of
  // conversation-full.html carries "Start new chat".
  function failure({ element, control }, error) {
    if (error.kind === 'conversation_full') return fullAlert({ element }, error.text);
    return element('aside', { role: 'alert', class: 'flex flex-col' }, element('p', {}, error.text),
      control(element('button', { type: 'button' }, 'Retry'), 'retry'));
  }

  const fullAlert = ({ element }, text) => element('div', { role: 'alert', class: 'flex flex-col' }, element('p', {}, text),
    element('button', { type: 'button' }, 'Start new chat'));

  // What follows the user's unit in an exchange, by the answer's state.
  function answerParts(ui, answer, key) {
    const { element } = ui;
    if (answer === null) return [];
    // A failed turn: no answer unit, the alert only (error-network.html; for a prompt into a
    // full conversation the maximum-length alert: INFERRED). A failure card over a finished
    // answer (the fake's stale stop) follows the unit instead.
    if (answer.status === 'failed') return [failure(ui, answer.error), ...(answer.full ? [fullAlert(ui, answer.full)] : [])];
    // Before the first words: the busy status line only (streaming-before-answer.html;
    // its "Thinking" text is INFERRED there).
    if (answer.status === 'generating' && answer.reply === '' && answer.error === null) {
      return [element('div', { role: 'status', 'aria-busy': 'true', class: 'thread-status' }, 'Thinking')];
    }
    // An answer cut short by a steering prompt keeps its unit, empty or not (INFERRED: no
    // source shows a mid-turn send in this layout).
    const parts = [answerUnit(ui, answer, key)];
    if (answer.error !== null) parts.push(failure(ui, answer.error));
    // conversation-full.html: the alert before the bar (their order is INFERRED).
    if (answer.full) parts.push(fullAlert(ui, answer.full));
    if (answer.status === 'done' && answer.error === null) parts.push(answerBar(ui));
    return parts;
  }

  // One exchange: `content` is {id, index, user, answer, latest}, user and answer being
  // page.js's turn contents (either may be null). `data-talvt-turn-state` stays "in_progress"
  // on the latest exchange after its answer ended (stale-turn-state.html, live 2026-10-07):
  // nothing may read it.
  function row(content, ui) {
    const { element } = ui;
    const key = exchangeKey(content);
    const { user, answer } = content;
    const finished = answer !== null && answer.status === 'done' && !content.latest;
    return element('div', { 'data-turn-key': content.id },
      element('div', { 'data-content-search-turn-key': key, 'data-talvt-turn-state': finished ? 'complete' : 'in_progress' },
        ...(user === null ? [] : [userUnit(ui, user, key)]),
        ...answerParts(ui, answer, key)));
  }

  return Object.freeze({
    name: 'turn-key-2026-09',
    title: 'ChatGPT',
    pathPattern: /^\/c\/([\w-]+)\/?$/,
    conversationPath: (id) => `/c/${id}`,
    texts: {
      // As in classic.js (INFERRED for this layout, see failure()).
      somethingWentWrong: 'Something went wrong while generating the response. If this issue persists please contact us through our help center at help.openai.com.',
      conversationFull: "You've reached the maximum length for this conversation, but you can keep talking by starting a new chat.",
    },
    failedSendOnUserTurn: false,
    fullNotice: 'turn',
    lockComposerWhileBusy: false,
    exchanges: true,
    pillShape: 'app-mention',
    shell,
    slot,
    row,
  });
})();
