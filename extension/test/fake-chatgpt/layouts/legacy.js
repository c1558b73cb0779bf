// The fake page's first layout, written from secondary notes before real captures were at
// hand (no fixture: it is NOT the real page): `<article>` turns directly under #thread, a
// send button present (disabled) even on an empty composer, Stop in the same slot, a composer
// locked while a turn generates, a failed send drawn on the user's turn, and the maximum-
// length notice outside the turns. Kept as the default of a server that names no layout
// because shape-checks.mjs and test/e2e/lib/ui-surfaces.mjs read this markup (see
// layouts/profiles.mjs). Classic script, loaded before page.js.
'use strict';

globalThis.FakeChatGPTLayout = (() => {
  const SIDEBAR_TITLES = ['Verify you are human', "You've reached the maximum length for this conversation.", 'Something went wrong. Please try again.'];

  function shell({ element }) {
    const thread = element('div', { id: 'thread' });
    const composer = element('div', { id: 'prompt-textarea', class: 'ProseMirror', contenteditable: 'true', role: 'textbox', translate: 'no', 'aria-label': 'Message ChatGPT' },
      element('p', { 'data-placeholder': 'Ask anything', class: 'placeholder' }, element('br', { class: 'ProseMirror-trailingBreak' })));
    const trailing = element('div', { id: 'composer-trailing-actions' });
    const form = element('form', { id: 'composer-form', 'data-type': 'unified-composer' }, composer, trailing);
    // The sidebar's chat titles quote page-state texts on purpose: titles are written by
    // people and the model, and must never read as a challenge, an error or a full conversation.
    const nav = element('nav', { 'aria-label': 'Chat history' }, element('a', { href: '/' }, 'New chat'),
      element('ol', {}, ...SIDEBAR_TITLES.map((title) => element('li', {}, element('a', { href: '#' }, title)))));
    document.body.prepend(element('aside', {}, nav), element('main', {}, thread, form));
    return { form, composer, trailing, list: () => thread };
  }

  // One submit slot that is Send or Stop; a steerable turn adds a second, separate Send (a
  // test affordance: no source shows a mid-turn send on the real page).
  function slot({ trailing }, { element, setAttribute, setDisabled, setText, control }) {
    const submit = control(element('button', { type: 'button', id: 'composer-submit-button', 'data-testid': 'send-button', 'aria-label': 'Send prompt', disabled: true }, '\u2191'), 'send');
    trailing.append(submit);
    let steer = null;
    return {
      update({ busy, steerable, hasText }) {
        control(submit, busy ? 'stop' : 'send');
        setAttribute(submit, 'data-testid', busy ? 'stop-button' : 'send-button');
        setAttribute(submit, 'aria-label', busy ? 'Stop streaming' : 'Send prompt');
        setText(submit, busy ? '\u25A0' : '\u2191');
        setDisabled(submit, busy ? false : !hasText);
        if (steerable && steer === null) {
          steer = control(element('button', { type: 'button', 'data-testid': 'send-button', 'aria-label': 'Send prompt' }, '\u2191'), 'steer');
          submit.before(steer);
        } else if (!steerable && steer !== null) {
          steer.remove();
          steer = null;
        }
        if (steer !== null) setDisabled(steer, !hasText);
      },
    };
  }

  function errorRow({ element, control }, text) {
    return element('div', { class: 'flex items-center gap-2' },
      element('div', { class: 'text-token-text-error' }, text),
      control(element('button', { type: 'button', class: 'btn btn-secondary', 'data-testid': 'regenerate-thread-error-button' }, 'Retry'), 'retry'));
  }

  function row(content, ui) {
    const { element, paragraphs, control } = ui;
    const article = element('article', { class: 'w-full', 'data-turn-id': content.id, 'data-testid': `conversation-turn-${content.index + 1}`, 'data-turn': content.role });
    if (content.role === 'user') {
      article.append(element('h5', { class: 'sr-only' }, 'You said:'),
        element('div', { 'data-message-author-role': 'user', 'data-message-id': content.id }, element('div', { class: 'whitespace-pre-wrap' }, content.text)),
        ...(content.error ? [errorRow(ui, content.error.text)] : []));
      return article;
    }
    const message = element('div', { 'data-message-author-role': 'assistant', 'data-message-id': content.id });
    if (content.reply !== '') message.append(element('div', { class: 'markdown prose w-full break-words' }, ...paragraphs(content.reply)));
    if (content.error) message.append(errorRow(ui, content.error.text));
    article.append(element('h6', { class: 'sr-only' }, 'ChatGPT said:'),
      ...(content.status === 'generating' ? [element('div', { class: 'text-token-text-secondary' },
        content.workedSeconds === null ? 'Thinking' : `Worked for ${content.workedSeconds}s`,
        control(element('button', { type: 'button', 'aria-label': 'Skip thinking' }, 'Skip'), 'skip-thinking'))] : []),
      message,
      ...(content.status === 'done' ? [element('div', { class: 'flex turn-actions' },
        control(element('button', { type: 'button', 'data-testid': 'copy-turn-action-button', 'aria-label': 'Copy' }, 'Copy'), 'copy'),
        control(element('button', { type: 'button', 'data-testid': 'good-response-turn-action-button', 'aria-label': 'Good response' }, 'Good'), 'good'))] : []));
    return article;
  }

  return Object.freeze({
    name: 'legacy',
    title: 'ChatGPT',
    pathPattern: /^\/c\/([\w-]+)\/?$/,
    conversationPath: (id) => `/c/${id}`,
    texts: { somethingWentWrong: 'Something went wrong. Please try again.', conversationFull: "You've reached the maximum length for this conversation." },
    failedSendOnUserTurn: true,
    fullNotice: 'page',
    lockComposerWhileBusy: true,
    shell,
    slot,
    row,
  });
})();
