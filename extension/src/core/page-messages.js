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
  'loaded', 'composer', 'composerEditable', 'composerText', 'sendButton', 'sendEnabled', 'stopButton', 'latestIsAssistant',
  'lastAssistantDone', 'conversationFull', 'loginRequired', 'challenge',
];
const COUNT_FACTS = ['userTurns', 'assistantTurns'];
/** `facts.error.kind` (selectors.js ERROR_CONCEPTS and its fallbacks); any other reads as `generic`. */
const PAGE_ERROR_KINDS = [
  'delivery_timeout', 'something_went_wrong', 'connection_interrupted', 'stream_error', 'thinking_failed', 'thinking_stopped',
  'subscription_failed', 'app_unavailable', 'turn_failed', 'generic',
];
/** The page's stops that travel as `{text}` (or a dialog's `{heading}`), each text at most ERROR_TEXT_CHARS_MAX. */
const NOTICE_FACTS = { rateLimited: 'text', suspiciousActivity: 'text', dialog: 'heading' };
/** `facts.approval.buttons`: at most this many labels are kept. */
const APPROVAL_BUTTONS_MAX = 6;
/** `facts.missing`: what the adapter needs ('composer', 'turns'). */
const MISSING_PARTS = ['composer', 'turns'];
/** `facts.composerDraft`: what a person put in the composer (composer.js draftOf). */
const DRAFT_KINDS = ['text', 'mention', 'upload', 'image', 'quote', 'attachment'];
/** `facts.unrecognized.where`: where the allow-list looks (vocabulary.js). */
const UNRECOGNIZED_PLACES = ['latest turn', 'composer'];

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
  out.composerEditable = facts.composerEditable !== false;
  out.error = null;
  if (facts.error) {
    const kind = PAGE_ERROR_KINDS.includes(facts.error.kind) ? facts.error.kind : 'generic';
    out.error = { kind, text: bounded(facts.error.text), retry: facts.error.retry === true };
  }
  out.usageLimit = null;
  if (facts.usageLimit) {
    const untilMs = Number.isSafeInteger(facts.usageLimit.untilMs) ? facts.usageLimit.untilMs : null;
    out.usageLimit = { text: bounded(facts.usageLimit.text), untilMs };
  }
  for (const [name, field] of Object.entries(NOTICE_FACTS)) {
    out[name] = facts[name] ? { [field]: bounded(facts[name][field]) } : null;
  }
  out.approval = null;
  if (facts.approval) {
    const buttons = Array.isArray(facts.approval.buttons) ? facts.approval.buttons : [];
    out.approval = {
      app: typeof facts.approval.app === 'string' ? bounded(facts.approval.app) : null,
      title: typeof facts.approval.title === 'string' ? bounded(facts.approval.title) : null,
      buttons: buttons.slice(0, APPROVAL_BUTTONS_MAX).map(bounded),
      warning: typeof facts.approval.warning === 'string' ? bounded(facts.approval.warning) : null,
    };
  }
  out.composerDraft = DRAFT_KINDS.includes(facts.composerDraft) ? facts.composerDraft : null;
  out.unrecognized = null;
  if (facts.unrecognized) {
    // A place this reader does not know is still somewhere not recognized: never dropped.
    const where = UNRECOGNIZED_PLACES.includes(facts.unrecognized.where) ? facts.unrecognized.where : 'page';
    out.unrecognized = { where, what: bounded(facts.unrecognized.what) || 'something', settling: facts.unrecognized.settling === true };
  }
  out.missing = Array.isArray(facts.missing) ? MISSING_PARTS.filter((part) => facts.missing.includes(part)) : [];
  return out;
}

// A page text for people: a string of at most ERROR_TEXT_CHARS_MAX characters ('' otherwise).
function bounded(value) {
  return typeof value === 'string' ? value.slice(0, ERROR_TEXT_CHARS_MAX) : '';
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
/**
 * `app`: `{name, description}` of the developer app to choose in the composer before this
 * send (content.js does it once per page load), or null when app selection is off.
 */
export const submitRequest = (requestId, text, nonce, mode, app = null) => ({ type: 'submit', requestId, text, nonce, mode, ...(app ? { app } : {}) });
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
