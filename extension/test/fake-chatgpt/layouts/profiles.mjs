// The fake ChatGPT page's layout profiles as the Node side of the tests sees them: their
// names, which one a server gets by default, and per profile what a check needs to drive the
// page without the adapter (where the composer is, which button sends, which is Retry) and
// what the real page shows there (test/fixtures/pages/SOURCES.md). The markup itself is
// drawn in the browser by layouts/<name>.js.

/** The layouts of the real page, oldest first (test/fixtures/pages/<name>/). */
export const REAL_LAYOUTS = Object.freeze(['article-2026-01', 'section-2026-08', 'transcript-2026-10']);

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
  textarea: false,
  send: 'button[data-testid="send-button"]',
  retry: 'button[data-testid="regenerate-thread-error-button"]',
  conversationPrefix: '/c/',
  // Whether the submit slot of an empty, idle composer holds a (disabled) send button.
  sendWhileEmpty: false,
  // Whether a prompt the page failed to answer with "something went wrong" leaves the user's
  // turn without an assistant turn (legacy) or shows the failure card as the assistant turn.
  failedSendOnUserTurn: false,
  // Whether a new chat at / reads as logged out (login required): the logged-out layout.
  loggedOut: false,
};

export const PROFILES = Object.freeze({
  'article-2026-01': Object.freeze({ ...CLASSIC, source: 'test/fixtures/pages/article-2026-01/' }),
  'section-2026-08': Object.freeze({ ...CLASSIC, source: 'test/fixtures/pages/section-2026-08/' }),
  'transcript-2026-10': Object.freeze({
    ...CLASSIC,
    source: 'test/fixtures/pages/transcript-2026-10/',
    composer: 'textarea#mobile-composer-prompt',
    textarea: true,
    send: 'button[data-composer-submit]',
    retry: 'button[data-conversation-recovery-retry]',
    conversationPrefix: '/uc/',
    sendWhileEmpty: true,
    loggedOut: true,
  }),
  legacy: Object.freeze({ ...CLASSIC, source: null, sendWhileEmpty: true, failedSendOnUserTurn: true }),
});

export function profileOf(layout) {
  const profile = PROFILES[layout];
  if (!profile) throw new Error(`unknown fake ChatGPT layout ${JSON.stringify(layout)} (known: ${LAYOUTS.join(', ')})`);
  return profile;
}
