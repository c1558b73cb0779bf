// ChatGPT URLs: which are conversations, and when two name the same conversation. A
// conversation URL's path ends in `/c/<id>` (also under a GPT or a project: `/g/<gpt>/c/<id>`;
// a logged-out chat of the October 2026 layout: `/uc/<id>`, see
// extension/test/fixtures/pages/SOURCES.md); query and fragment never change which
// conversation a URL shows.

const CONVERSATION_PATH = /\/u?c\/[A-Za-z0-9][A-Za-z0-9_-]*\/?$/;

function parse(url) {
  return typeof url === 'string' && URL.canParse(url) ? new URL(url) : null;
}

/** The URL without query or fragment (and without a trailing slash after `/c/<id>`), or null. */
export function conversationUrlOf(url) {
  const parsed = parse(url);
  if (!parsed || !CONVERSATION_PATH.test(parsed.pathname)) return null;
  return `${parsed.origin}${parsed.pathname.replace(/\/$/, '')}`;
}

/** Whether `url` shows a conversation (rather than a new chat or another page). */
export function isConversationUrl(url) {
  return conversationUrlOf(url) !== null;
}

/** Whether two URLs show the same conversation. */
export function sameConversation(a, b) {
  const left = conversationUrlOf(a);
  return left !== null && left === conversationUrlOf(b);
}

/** Whether `url` is on the same origin as the chat base URL (a page the extension may open). */
export function onChatOrigin(url, chatBaseUrl) {
  const page = parse(url);
  const base = parse(chatBaseUrl);
  return Boolean(page && base && page.origin === base.origin);
}
