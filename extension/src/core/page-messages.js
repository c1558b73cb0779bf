// The `page` port between the content script and the background (extension/README.md):
// validates what a page sends (typed `PageMessageError`, never trusted blindly) and builds
// what the background sends to a page.

/** `facts.lastAssistantTail`: at most this many characters are kept. */
export const ASSISTANT_TAIL_CHARS_MAX = 2048;

/** `facts.error.text`: at most this many characters are kept. */
export const ERROR_TEXT_CHARS_MAX = 200;

/** A page's URL: at most this many characters. */
export const PAGE_URL_CHARS_MAX = 2048;

/** A page's `requestId` / `detail` / `code`: at most this many characters. */
const SHORT_TEXT_CHARS_MAX = 500;

/** A message from a page that does not fit the contract. */
export class PageMessageError extends Error {
  constructor(message) {
    super(message);
    this.name = 'PageMessageError';
  }
}

const BOOLEAN_FACTS = [
  'loaded', 'composer', 'composerText', 'sendButton', 'sendEnabled', 'stopButton', 'latestIsAssistant', 'lastAssistantDone',
  'conversationFull', 'loginRequired', 'challenge', 'usageLimit',
];
const COUNT_FACTS = ['userTurns', 'assistantTurns'];
const PAGE_ERROR_KINDS = ['delivery_timeout', 'something_went_wrong', 'generic'];

function fail(problem) {
  throw new PageMessageError(`bad page message: ${problem}`);
}

function text(value, field, charsMax) {
  if (typeof value !== 'string') fail(`${field}: expected a string`);
  if (value.length > charsMax) fail(`${field}: longer than ${charsMax} characters`);
  return value;
}

function url(value, field) {
  text(value, field, PAGE_URL_CHARS_MAX);
  if (!URL.canParse(value)) fail(`${field}: not a URL`);
  return value;
}

/** The canonical facts: known fields only, booleans as booleans, bounded texts. */
export function readFacts(facts) {
  if (!facts || typeof facts !== 'object' || Array.isArray(facts)) fail('facts: expected an object');
  const out = { url: url(facts.url, 'facts.url') };
  for (const name of BOOLEAN_FACTS) out[name] = facts[name] === true;
  for (const name of COUNT_FACTS) {
    const n = facts[name] ?? 0;
    if (!Number.isSafeInteger(n) || n < 0) fail(`facts.${name}: expected a whole number`);
    out[name] = n;
  }
  const tail = facts.lastAssistantTail ?? '';
  if (typeof tail !== 'string') fail('facts.lastAssistantTail: expected a string');
  out.lastAssistantTail = tail.slice(-ASSISTANT_TAIL_CHARS_MAX);
  out.error = null;
  if (facts.error) {
    const kind = PAGE_ERROR_KINDS.includes(facts.error.kind) ? facts.error.kind : 'generic';
    const errorText = typeof facts.error.text === 'string' ? facts.error.text.slice(0, ERROR_TEXT_CHARS_MAX) : '';
    out.error = { kind, text: errorText };
  }
  return out;
}

/**
 * A validated message from a page:
 * `{type:'page.hello'|'page.facts', url, facts}`, `{type:'submit.result', requestId, status, code?, detail?, touched}`,
 * `{type:'reconcile.result', requestId, found}`, `{type:'page.ping'}`. Throws PageMessageError.
 */
export function readPageMessage(message) {
  if (!message || typeof message !== 'object') fail('expected an object');
  switch (message.type) {
    case 'page.hello':
    case 'page.facts': {
      const facts = readFacts(message.facts);
      return { type: message.type, url: message.url === undefined ? facts.url : url(message.url, 'url'), facts };
    }
    case 'submit.result': {
      const requestId = text(message.requestId, 'requestId', SHORT_TEXT_CHARS_MAX);
      if (message.status !== 'submitted' && message.status !== 'failed') fail('status: expected submitted or failed');
      if (typeof message.touched !== 'boolean') fail('touched: expected true or false');
      const result = { type: message.type, requestId, status: message.status, touched: message.touched };
      if (message.status === 'failed') {
        result.code = text(message.code, 'code', SHORT_TEXT_CHARS_MAX);
        if (!/^[A-Z][A-Z0-9_]*$/.test(result.code)) fail('code: expected a code such as COMPOSER_BUSY');
        result.detail = text(message.detail ?? '', 'detail', SHORT_TEXT_CHARS_MAX);
      }
      return result;
    }
    case 'reconcile.result': {
      if (typeof message.found !== 'boolean') fail('found: expected true or false');
      return { type: message.type, requestId: text(message.requestId, 'requestId', SHORT_TEXT_CHARS_MAX), found: message.found };
    }
    case 'page.ping':
      return { type: 'page.ping' };
    default:
      return fail(`unknown type ${JSON.stringify(message.type)}`);
  }
}

export const pageManaged = (workerId) => ({ type: 'page.managed', workerId });
export const pageUnmanaged = () => ({ type: 'page.unmanaged' });
/** Asks a managed page for a fresh `page.facts` even if nothing changed (`conversation.inspect`). */
export const pageInspect = () => ({ type: 'page.inspect' });
export const submitRequest = (requestId, text, nonce, mode) => ({ type: 'submit', requestId, text, nonce, mode });
export const reconcileRequest = (requestId, nonce) => ({ type: 'reconcile', requestId, nonce });

/** The evidence line appended to every prompt: `[attempt exe-N]` (README, "Nonce"). */
export function nonceOf(attemptId) {
  return `[attempt ${attemptId}]`;
}

/** The text typed into the composer: the prompt with the nonce as its last line. */
export function promptWithNonce(prompt, attemptId) {
  const separator = prompt === '' || prompt.endsWith('\n') ? '' : '\n';
  return `${prompt}${separator}${nonceOf(attemptId)}`;
}
