// The article-2026-01 layout of the fake page: markup as in
// test/fixtures/pages/article-2026-01/*.html (sources there and in SOURCES.md: the
// obsidian-AI-exporter captures of 2026-01-29 and 2026-02-27). Turns are
// `article[data-testid="conversation-turn-N"][data-turn]` with h5/h6 sr-only headings, a
// `[data-message-author-role]` node on both roles inside `.agent-turn` for the assistant,
// the action bar beside it once a turn ends; the delivery timeout is a `.text-token-text-error`
// card with Retry inside it (error-delivery-timeout.html); no Dictate button while generating
// (generating.html). The shared page is layouts/classic.js. Classic script.
'use strict';

globalThis.FakeChatGPTLayout = globalThis.FakeChatGPTClassic({
  name: 'article-2026-01',
  turnTag: 'article',
  headings: { user: 'h5', assistant: 'h6' },
  headerActions: { id: 'conversation-header-actions' },
  sharePrompt: false,
  shareInActionBar: true,
  dictateWhileGenerating: false,
  wrapRow: (ui, content, turn) => turn,
  // idle.html, generating.html: the message node inside .agent-turn, the action bar after it.
  assistantBody: ({ element }, content, body, bar) => [element('div', { class: 'agent-turn' },
    element('div', { 'data-message-author-role': 'assistant', 'data-message-id': content.id, dir: 'auto', 'data-message-model-slug': 'gpt-5-2', class: 'text-message' }, ...body),
    ...(bar ? [bar] : []))],
  // error-delivery-timeout.html
  deliveryTimeoutCard: ({ element }, text, retry) => element('div', { class: 'flex flex-col gap-2 rounded-2xl border border-token-border-default text-token-text-error' },
    element('div', { class: 'text-sm' }, text), element('div', {}, retry)),
});
