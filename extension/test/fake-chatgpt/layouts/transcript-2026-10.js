// The transcript-2026-10 layout of the fake page (the logged-out "wm-app" page): markup as in
// test/fixtures/pages/transcript-2026-10/*.html (sources there and in SOURCES.md: the saved
// transcript of 2026-09-25 and the capture notes of 2026-10-03). Turns are
// `ol[data-conversation-transcript] > li[data-message-role][id]` (the list appears with the
// first turn: new-chat.html has none); the composer is `textarea#mobile-composer-prompt`; one
// `button[data-composer-submit]` is the whole submit slot: `type=submit aria-disabled=true
// data-visually-disabled` while the composer is empty (idle.html), enabled once an input
// event brought text (draft.html), `type=button`, the stop label and `data-stop-generating`
// while generating (generating.html); a streaming turn is `li#pending-<id>[data-message-streaming]`;
// a finished answer carries `data-message-complete` and the "Response actions" group; a
// failure is the `[data-conversation-recovery]` block with its Retry
// (error-delivery-timeout.html, error-something-went-wrong.html). Logged out on every page
// (`[data-logged-out]`, log-in buttons); conversations live at /uc/<id>. Classic script.
'use strict';

globalThis.FakeChatGPTLayout = (() => {
  const svg = () => {
    const node = document.createElementNS('http://www.w3.org/2000/svg', 'svg');
    node.setAttribute('aria-hidden', 'true');
    node.append(document.createElementNS('http://www.w3.org/2000/svg', 'path'));
    return node;
  };
  const SEND_LABEL = 'Send message';
  const STOP_LABEL = 'Stop generating';

  // idle.html / new-chat.html
  function shell({ element, setAttribute }) {
    const thread = element('div', { 'data-mobile-thread': true, class: 'wm-app-thread' });
    const conversation = element('section', { 'data-web-mobile-conversation': true }, thread);
    const composer = element('textarea', { id: 'mobile-composer-prompt', name: 'prompt', 'data-mobile-composer-prompt': true, 'aria-label': 'Chat with ChatGPT', placeholder: 'Ask anything', rows: '1' });
    const form = element('form', { 'data-mobile-composer': true, class: 'wm-composer-composer' }, composer);
    const loginButton = (className, extra = {}) => element('button', { type: 'button', class: className, 'data-login-button': true, ...extra }, 'Log in');
    document.body.prepend(element('div', { class: 'wm-app-appShell', 'data-logged-out': true },
      element('nav', { class: 'wm-sidebar-sidebar', 'aria-label': 'Chat history' }, element('a', { href: '/' }, 'New chat'), loginButton('wm-sidebar-loginButton')),
      element('main', { class: 'wm-app-conversation' },
        element('header', {}, loginButton('wm-app-loginButton', { 'data-mobile-auth-entry-action': 'login_or_signup' })),
        element('div', { 'data-swipable-detail-body': true, style: 'overflow-y: auto' }, conversation),
        element('div', { 'data-composer-dock': true }, form))));
    let list = null;
    return {
      form,
      composer,
      list(create) {
        if (list === null && create) {
          list = element('ol', { 'aria-label': 'Conversation', 'data-conversation-transcript': true });
          thread.append(list);
        }
        const id = globalThis.location.pathname.match(/^\/uc\/([\w-]+)/)?.[1] ?? null;
        setAttribute(conversation, 'data-conversation-id', id);
        return list;
      },
    };
  }

  // One button for Send and Stop. While a steerable turn generates, a second
  // data-composer-submit button with the send label stands before it: a TEST AFFORDANCE for
  // the adapter's steering path; the sources show no mid-turn send on this layout (the one
  // button "swaps type/aria-label to the stop label", index:59049942297).
  function slot({ form }, { element, setAttribute, setDisabled, control }) {
    const button = control(element('button', { type: 'submit', 'data-composer-submit': true, 'data-send-label': SEND_LABEL, 'data-stop-label': STOP_LABEL, 'aria-label': SEND_LABEL, 'aria-disabled': 'true', 'data-visually-disabled': true }, svg()), 'send');
    form.append(button);
    let steer = null;
    return {
      update({ busy, steerable, hasText }) {
        control(button, busy ? 'stop' : 'send');
        setAttribute(button, 'type', busy ? 'button' : 'submit');
        setAttribute(button, 'aria-label', busy ? STOP_LABEL : SEND_LABEL);
        setAttribute(button, 'data-stop-generating', busy ? '' : null);
        setAttribute(button, 'aria-disabled', !busy && !hasText ? 'true' : null);
        setAttribute(button, 'data-visually-disabled', !busy && !hasText ? '' : null);
        if (steerable && steer === null) {
          steer = control(element('button', { type: 'button', 'data-composer-submit': true, 'data-send-label': SEND_LABEL, 'aria-label': SEND_LABEL }, svg()), 'steer');
          button.before(steer);
        } else if (!steerable && steer !== null) {
          steer.remove();
          steer = null;
        }
        if (steer !== null) setDisabled(steer, !hasText);
      },
    };
  }

  // error-delivery-timeout.html, error-something-went-wrong.html. No source shows the
  // maximum-length notice on this layout: it is drawn like the classic layouts' card
  // (a notice and a "Start new chat" button in the latest answer).
  function failure({ element, control }, error) {
    if (error.kind === 'conversation_full') return fullNotice({ element }, error.text);
    return element('div', { 'data-conversation-recovery': true }, element('p', {}, error.text),
      control(element('button', { type: 'button', 'data-conversation-recovery-retry': true, 'aria-description': error.text }, 'Retry'), 'retry'));
  }

  const fullNotice = ({ element }, text) => element('div', {}, element('p', {}, text), element('button', { type: 'button' }, 'Start new chat'));

  function row(content, ui) {
    const { element, paragraphs, control } = ui;
    if (content.role === 'user') {
      return element('li', { 'data-message-role': 'user', id: content.id },
        element('h4', { 'data-message-attribution': true }, 'You said:'),
        element('div', { 'data-submit-message-animation-target': true },
          element('button', { 'data-user-message-bubble': true, type: 'button' }, element('p', { 'data-user-message-copy': true }, content.text)),
          element('div', { 'data-message-intervention': true })),
        ...(content.error ? [failure(ui, content.error)] : []));
    }
    const generating = content.status === 'generating';
    const done = content.status === 'done' && content.error === null;
    const started = content.reply !== '' || content.error !== null || !generating;
    const body = [element('span', { 'aria-hidden': 'true', 'data-assistant-placeholder-slot': true, hidden: started }, element('span', {}, element('span')))];
    if (content.reply !== '') {
      body.push(element('div', {}, element('div', { 'data-assistant-markdown': true },
        ...paragraphs(content.reply, (index) => ({ dir: 'ltr', 'data-assistant-stream-block': true, 'data-assistant-stream-block-index': String(index) })))));
    }
    if (content.full) body.push(fullNotice(ui, content.full));
    if (content.error) body.push(failure(ui, content.error));
    body.push(element('div', { 'data-message-intervention': true }));
    // generating.html: li#pending-<id>[data-message-streaming]; idle.html: data-message-complete
    // and the Response actions group once the answer is finished.
    return element('li', {
      'data-message-role': 'assistant',
      id: generating ? `pending-${content.id}` : content.id,
      'data-assistant-content-started': started,
      'data-message-streaming': generating,
      'data-message-complete': done,
    },
    element('h4', { 'data-message-attribution': true }, 'ChatGPT said:'),
    element('div', {}, ...body),
    ...(done ? [element('div', { 'aria-label': 'Response actions', 'data-assistant-message-actions': true, 'data-message-actions': true, role: 'group' },
      control(element('button', { type: 'button', 'data-icon-only': true, 'aria-label': 'Copy response', 'data-copy-message': true }, svg()), 'copy'),
      element('button', { type: 'button', 'data-icon-only': true, 'aria-label': 'Share', 'data-share-message': true }, svg()),
      element('span', { 'aria-live': 'polite', 'aria-atomic': 'true', role: 'status' }))] : []));
  }

  return Object.freeze({
    name: 'transcript-2026-10',
    title: 'ChatGPT: Chat, Work, Create & Code with AI',
    pathPattern: /^\/uc\/([\w-]+)\/?$/,
    conversationPath: (id) => `/uc/${id}`,
    texts: {
      somethingWentWrong: 'Something went wrong while generating the response.',
      conversationFull: 'You’ve reached the maximum length for this conversation, but you can keep talking by starting a new chat.',
    },
    failedSendOnUserTurn: false,
    fullNotice: 'turn',
    lockComposerWhileBusy: false,
    shell,
    slot,
    row,
  });
})();
