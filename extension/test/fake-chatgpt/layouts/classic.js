// The signed-in ("classic") chatgpt.com page the article-2026-01 and section-2026-08 layouts
// share, as their fixtures show it (test/fixtures/pages/article-2026-01/*.html and
// section-2026-08/*.html; SOURCES.md names the captures): the sidebar with the person's
// chats, the header, the thread, and the unified composer with its ProseMirror editor, a
// hidden fallback textarea and one submit slot. An empty composer's slot holds the voice
// button ("Start Voice", no data-testid) and no send button; text brought by an input event
// puts #composer-submit-button[data-testid="send-button"] there; while a turn generates the
// same id carries data-testid="stop-button". `FakeChatGPTClassic(options)` returns a layout
// for page.js; options say where the two layouts differ (layouts/article-2026-01.js,
// layouts/section-2026-08.js). Classic script, loaded before the layout's own file.
'use strict';

globalThis.FakeChatGPTClassic = (options) => {
  // Chat titles in the sidebar quote page-state texts on purpose: titles are written by
  // people and the model, and must never read as a challenge, an error or a full conversation.
  const SIDEBAR_TITLES = ['Verify you are human', 'You’ve reached the maximum length for this conversation.', 'Something went wrong. Please try again.'];
  const svg = () => {
    const node = document.createElementNS('http://www.w3.org/2000/svg', 'svg');
    node.setAttribute('aria-hidden', 'true');
    node.append(document.createElementNS('http://www.w3.org/2000/svg', 'path'));
    return node;
  };
  const texts = {
    somethingWentWrong: 'Something went wrong while generating the response. If this issue persists please contact us through our help center at help.openai.com.',
    conversationFull: 'You’ve reached the maximum length for this conversation, but you can keep talking by starting a new chat.',
  };

  // Markup as in <layout>/idle.html and new-chat.html.
  function shell({ element }) {
    const list = element('div', { class: 'flex flex-col text-sm' });
    const composer = element('div', { contenteditable: 'true', translate: 'no', class: 'ProseMirror', id: 'prompt-textarea', 'data-virtualkeyboard': 'true' },
      element('p', { 'data-placeholder': 'Ask anything', class: 'placeholder' }, element('br', { class: 'ProseMirror-trailingBreak' })));
    const trailing = element('div', { class: '[grid-area:trailing]' });
    const form = element('form', { class: 'group/composer w-full', 'data-type': 'unified-composer' },
      element('div', { class: 'hidden' }, element('input', { multiple: true, tabindex: '-1', type: 'file' })),
      element('div', { 'data-composer-surface': 'true', class: 'grid' },
        element('div', { class: '[grid-area:primary]' },
          element('textarea', { class: 'wcDTda_fallbackTextarea', name: 'prompt-textarea', placeholder: 'Ask anything', 'data-virtualkeyboard': 'true', style: 'display: none' }),
          composer),
        element('div', { class: '[grid-area:leading]' },
          element('button', { type: 'button', class: 'composer-btn', 'data-testid': 'composer-plus-btn', 'aria-label': 'Add files and more', id: 'composer-plus-btn', 'aria-haspopup': 'menu', 'aria-expanded': 'false', 'data-state': 'closed' }, svg())),
        trailing));
    const nav = element('nav', { 'aria-label': 'Chat history' },
      element('a', { 'data-testid': 'create-new-chat-button', href: '/' }, 'New chat'),
      ...SIDEBAR_TITLES.map((title, index) => element('a', { href: `/c/00000000-0000-4000-8000-00000000000${index + 1}` }, title)));
    const header = element('header', { id: 'page-header' },
      element('button', { 'aria-label': 'Model selector, current model is 5.2', type: 'button', 'aria-haspopup': 'menu', 'aria-expanded': 'false', 'data-state': 'closed', 'data-testid': 'model-switcher-dropdown-button' }, element('div', {}, 'ChatGPT'), svg()),
      element('div', options.headerActions,
        element('button', { 'aria-label': 'Share', 'data-testid': 'share-chat-button' }, 'Share'),
        element('button', { 'aria-label': 'Open conversation options', 'data-testid': 'conversation-options-button' }, svg())));
    const main = element('main', { id: 'main', class: 'min-h-0 flex-1' },
      element('div', { id: 'thread', class: 'group/thread flex flex-col min-h-full' },
        element('div', { role: 'presentation', class: 'composer-parent flex flex-1 flex-col' },
          list,
          element('div', { id: 'thread-bottom-container' },
            element('div', { id: 'thread-bottom' }, form,
              element('div', { class: 'text-token-text-secondary' }, 'ChatGPT can make mistakes. Check important info.'))))));
    document.body.prepend(element('div', { class: 'flex h-full w-full' }, nav,
      element('div', { class: '@container/main relative flex min-w-0 flex-1 flex-col' }, header, main)));
    return { form, composer, trailing, list: () => list };
  }

  // The submit slot: voice (idle.html), send (draft.html), stop (generating.html). While a
  // steerable turn generates, a second send button stands before Stop: a TEST AFFORDANCE for
  // the adapter's steering path; no source shows a mid-turn send on these layouts.
  function slot({ trailing }, { element, setDisabled, control }) {
    let shown = null;
    let steer = null;
    const wrap = (button) => element('div', {}, element('span', { 'data-state': 'closed' }, element('div', {}, element('div', { class: 'relative' }, button))));
    const dictate = () => element('button', { 'aria-label': 'Dictate button', type: 'button', class: 'composer-btn' }, svg());
    return {
      update({ busy, steerable, hasText }) {
        const mode = busy ? (steerable ? 'stop+steer' : 'stop') : hasText ? 'send' : 'voice';
        if (mode !== shown) {
          shown = mode;
          steer = null;
          const children = [];
          if (!busy || options.dictateWhileGenerating) children.push(dictate());
          if (mode === 'voice') {
            children.push(wrap(control(element('button', { type: 'button', 'aria-label': 'Start Voice', class: 'composer-submit-button-color text-submit-btn-text flex h-9 w-9 items-center justify-center rounded-full', style: 'view-transition-name: var(--vt-composer-speech-button)' }, svg()), 'voice')));
          } else if (mode === 'send') {
            children.push(wrap(control(element('button', { id: 'composer-submit-button', 'aria-label': 'Send prompt', 'data-testid': 'send-button', class: 'composer-submit-btn composer-submit-button-color h-9 w-9' }, svg()), 'send')));
          } else {
            if (steerable) {
              steer = control(element('button', { type: 'button', 'aria-label': 'Send prompt', 'data-testid': 'send-button', class: 'composer-submit-btn h-9 w-9' }, svg()), 'steer');
              children.push(steer);
            }
            children.push(wrap(control(element('button', { id: 'composer-submit-button', 'aria-label': 'Stop streaming', 'data-testid': 'stop-button', class: 'composer-submit-btn composer-submit-button-color h-9 w-9' }, svg()), 'stop')));
          }
          trailing.replaceChildren(...children);
        }
        if (steer !== null) setDisabled(steer, !hasText);
      },
    };
  }

  function actionBar({ element, control }) {
    // As in <layout>/idle.html: copy, good and bad response (article also: Share, Switch model).
    return element('div', { class: 'flex flex-wrap items-center' },
      control(element('button', { 'aria-label': 'Copy', 'data-testid': 'copy-turn-action-button', 'data-state': 'closed' }, svg()), 'copy'),
      control(element('button', { 'aria-label': 'Good response', 'data-testid': 'good-response-turn-action-button', 'data-state': 'closed' }, svg()), 'good'),
      control(element('button', { 'aria-label': 'Bad response', 'data-testid': 'bad-response-turn-action-button', 'data-state': 'closed' }, svg()), 'bad'),
      ...(options.shareInActionBar ? [element('button', { 'aria-label': 'Share', 'data-state': 'closed' }, svg()),
        element('button', { type: 'button', 'aria-haspopup': 'menu', 'aria-label': 'Switch model', 'data-state': 'closed' }, svg())] : []),
      element('button', { 'aria-label': 'More actions', type: 'button', 'aria-haspopup': 'menu', 'data-state': 'closed' }, svg()));
  }

  const retryButton = ({ element, control }) => control(element('button', { 'data-testid': 'regenerate-thread-error-button', class: 'btn btn-secondary' }, 'Retry'), 'retry');

  // The failure cards of error-delivery-timeout.html, error-something-went-wrong.html and
  // conversation-full.html.
  function errorCard(ui, error) {
    const { element } = ui;
    if (error.kind === 'delivery_timeout') return options.deliveryTimeoutCard(ui, error.text, retryButton(ui));
    if (error.kind === 'conversation_full') return fullCard(ui, error.text);
    return element('div', { class: 'flex flex-col gap-2' }, element('div', {}, error.text), element('div', {}, retryButton(ui)));
  }

  function fullCard({ element }, text) {
    return element('div', { class: 'flex flex-col gap-2 text-token-text-error' }, element('div', {}, text),
      element('div', {}, element('button', { class: 'btn btn-primary' }, 'Start new chat')));
  }

  function markdown({ element, paragraphs }, text) {
    return element('div', { class: 'markdown prose w-full break-words' }, ...paragraphs(text));
  }

  function row(content, ui) {
    const { element } = ui;
    const turn = element(options.turnTag, { 'data-turn-id': content.id, 'data-testid': `conversation-turn-${content.index + 1}`, 'data-scroll-anchor': 'false', 'data-turn': content.role, tabindex: '-1', dir: 'auto' });
    if (content.role === 'user') {
      turn.append(element(options.headings.user, { class: 'sr-only' }, 'You said:'),
        element('div', { 'data-message-author-role': 'user', 'data-message-id': content.id, dir: 'auto', class: 'text-message' },
          element('div', { class: 'user-message-bubble-color' }, element('div', { class: 'whitespace-pre-wrap' }, content.text))),
        element('div', { class: 'z-0 flex justify-end' },
          element('button', { 'aria-label': 'Copy', 'data-testid': 'copy-turn-action-button', 'data-state': 'closed' }, svg()),
          element('button', { 'aria-label': 'Edit message', 'data-state': 'closed' }, svg()),
          ...(options.sharePrompt ? [element('button', { 'aria-label': 'Share prompt', 'data-testid': 'share-prompt-link-turn-action-button', 'data-state': 'closed' }, svg())] : [])));
      if (content.error) turn.append(errorCard(ui, content.error));
      return options.wrapRow(ui, content, turn);
    }
    const body = [];
    if (content.reply !== '') body.push(markdown(ui, content.reply));
    if (content.full) body.push(fullCard(ui, content.full));
    if (content.error) body.push(errorCard(ui, content.error));
    // A turn with a failure card shows no action bar (as error-*.html).
    const bar = content.status === 'done' && content.error === null ? actionBar(ui) : null;
    turn.append(element(options.headings.assistant, { class: 'sr-only' }, 'ChatGPT said:'), ...options.assistantBody(ui, content, body, bar));
    return options.wrapRow(ui, content, turn);
  }

  return Object.freeze({
    name: options.name,
    title: 'ChatGPT',
    pathPattern: /^\/c\/([\w-]+)\/?$/,
    conversationPath: (id) => `/c/${id}`,
    texts,
    failedSendOnUserTurn: false,
    fullNotice: 'turn',
    lockComposerWhileBusy: false,
    shell,
    slot,
    row,
  });
};
