// The fake ChatGPT page's layout profiles as the Node side of the tests sees them: their
// names, which one a server gets by default, and per profile what a check needs to drive the
// page without the adapter (where the composer is, which button sends, which is Retry) and
// what the real page shows there (test/fixtures/pages/SOURCES.md). The markup itself is
// drawn in the browser by layouts/<name>.js.

/** The layouts of the real page, oldest first (test/fixtures/pages/<name>/). */
export const REAL_LAYOUTS = Object.freeze(['article-2026-01', 'section-2026-08', 'turn-key-2026-09', 'transcript-2026-10']);

/**
 * The page as first written from secondary notes (a send button on an empty composer, one
 * `<article>` layout), kept for comparison; no test uses it by default any more.
 */
export const LEGACY_LAYOUT = 'legacy';

export const LAYOUTS = Object.freeze([...REAL_LAYOUTS, LEGACY_LAYOUT]);

export function defaultLayout() {
  return process.env.FAKE_CHATGPT_LAYOUT || 'section-2026-08';
}

const CLASSIC = {
  composer: '#prompt-textarea',
  send: 'button[data-testid="send-button"]',
  retry: 'button[data-testid="regenerate-thread-error-button"]',
  conversationPrefix: '/c/',
  // Whether the submit slot of an empty, idle composer holds a (disabled) send button.
  sendWhileEmpty: false,
  // The failures (page.js error kinds) after which the user's turn stands without an assistant
  // turn (legacy: "something went wrong"; the app shell: every failure, an alert in the
  // exchange); the others show the failure card as the assistant turn.
  failuresWithoutAnswer: Object.freeze([]),
  // Whether a generating turn shows its assistant turn before the first words (the app shell
  // shows only the user's message and a status line until then).
  answerBeforeText: true,
  // Whether a new chat at / reads as logged out (login required): the logged-out layout.
  loggedOut: false,
};

export const PROFILES = Object.freeze({
  'article-2026-01': Object.freeze({ ...CLASSIC, source: 'test/fixtures/pages/article-2026-01/' }),
  'section-2026-08': Object.freeze({ ...CLASSIC, source: 'test/fixtures/pages/section-2026-08/' }),
  'turn-key-2026-09': Object.freeze({
    ...CLASSIC,
    source: 'test/fixtures/pages/turn-key-2026-09/',
    composer: 'form[data-chatgpt-composer] [data-composer-markdown]',
    send: 'form[data-chatgpt-composer] button[aria-label="Send"]',
    retry: '[data-turn-key] aside[role="alert"] button',
    sendWhileEmpty: true,
    failuresWithoutAnswer: Object.freeze(['delivery_timeout', 'something_went_wrong']),
    answerBeforeText: false,
  }),
  'transcript-2026-10': Object.freeze({
    ...CLASSIC,
    source: 'test/fixtures/pages/transcript-2026-10/',
    composer: 'textarea#mobile-composer-prompt',
    send: 'button[data-composer-submit]',
    retry: 'button[data-conversation-recovery-retry]',
    conversationPrefix: '/uc/',
    sendWhileEmpty: true,
    loggedOut: true,
  }),
  legacy: Object.freeze({ ...CLASSIC, source: null, sendWhileEmpty: true, failuresWithoutAnswer: Object.freeze(['something_went_wrong']) }),
});

export function profileOf(layout) {
  const profile = PROFILES[layout];
  if (!profile) throw new Error(`unknown fake ChatGPT layout ${JSON.stringify(layout)} (known: ${LAYOUTS.join(', ')})`);
  return profile;
}
