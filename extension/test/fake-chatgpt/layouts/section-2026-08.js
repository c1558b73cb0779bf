// The section-2026-08 layout of the fake page: markup as in
// test/fixtures/pages/section-2026-08/*.html (sources there and in SOURCES.md: live
// descriptions of 2026-08-05 to 2026-09-03). Turns are
// `section[data-testid="conversation-turn-N"][data-turn]`, each in its own
// `div[data-turn-id-container]`, with h4 sr-only headings; user sections keep their
// `[data-message-author-role]` node and a share-prompt button, assistant replies come WITHOUT
// one (idle.html, generating.html: later 2026 pages), while a failure card sits in an
// assistant role node (the August shape of error-*.html). The delivery timeout is the notice
// inside the turn's `.markdown` block followed by Retry (error-delivery-timeout.html). The
// shared page is layouts/classic.js. Classic script.
'use strict';

globalThis.FakeChatGPTLayout = globalThis.FakeChatGPTClassic({
  name: 'section-2026-08',
  turnTag: 'section',
  headings: { user: 'h4', assistant: 'h4' },
  headerActions: { 'data-testid': 'thread-header-right-actions' },
  sharePrompt: true,
  shareInActionBar: false,
  dictateWhileGenerating: true,
  // idle.html: <div data-turn-id-container> around each section.
  wrapRow: ({ element }, content, turn) => element('div', { 'data-turn-id-container': content.id }, turn),
  assistantBody: ({ element }, content, body, bar) => {
    // generating.html: a streaming status element while the turn runs.
    const status = content.status === 'generating' ? [element('div', { 'data-streaming-response-status': 'streaming' })] : [];
    if (content.error !== null) {
      return [...status, element('div', { 'data-message-author-role': 'assistant', 'data-message-id': content.id, dir: 'auto', 'data-message-model-slug': 'gpt-5-2' }, ...body)];
    }
    return [...status, ...body, ...(bar ? [bar] : [])];
  },
  // error-delivery-timeout.html: the notice as the whole `.markdown` block, Retry after it.
  deliveryTimeoutCard: ({ element }, text, retry) => {
    const fragment = document.createDocumentFragment();
    fragment.append(element('div', { class: 'markdown prose w-full break-words' }, element('p', {}, text)), retry);
    return fragment;
  },
});
