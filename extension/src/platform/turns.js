// The turn list of ChatGPT's page: the layout profiles the adapter knows
// (extension/test/fixtures/pages/SOURCES.md names the real captures behind each), locating
// the list once and reading it from its end, the turn counts, whether an answer is finished,
// and the tail of the latest answer. What this reads grows with the conversation, so it is
// built to cost the same on a 400-turn page as on a 4-turn one. Classic content script,
// loaded after page-texts.js and page-watch.js and before selectors.js into the same
// isolated world: it defines globalThis.OrcTurns and touches nothing on the page.
(() => {
  'use strict';

  const { normalizeText } = globalThis.OrcPageTexts;
  const WATCH = globalThis.OrcPageWatch;

  // The app-shell exchange: its element, the elements that are one message each (nested ones
  // are parts of their outer message), and what says a message is the user's.
  // The answer's prose counts as a message only where no message holds it (lonePlaceholderRole).
  const ANSWER_PROSE = '[data-markdown-text-style="assistant-message"]';
  const MESSAGE_MARKS = `[data-chatgpt-search-unit-key], [data-content-search-unit-key], [data-chatgpt-search-message-ids], [data-conversation-role], [data-user-message-bubble], ${ANSWER_PROSE}`;
  // What says an exchange already holds its answer's message.
  const ANSWER_MARKS = '[data-chatgpt-search-unit-key$=":assistant"], [data-content-search-unit-key$=":assistant"], [data-conversation-role="assistant"]';
  const EXCHANGE = Object.freeze({
    exchange: '[data-turn-key], [data-content-search-turn-key]',
    messages: `:is([data-turn-key], [data-content-search-turn-key]) :is(${MESSAGE_MARKS})`,
    message: MESSAGE_MARKS,
    userMessage: '[data-chatgpt-search-unit-key$=":user"], [data-content-search-unit-key$=":user"], [data-user-message-bubble], [data-markdown-text-tone="user-message"]',
  });

  /**
   * The layouts the adapter reads, newest first. `turns` finds the turn elements; `role`
   * reads one turn's author; `extent`, where present, gives the element read as that turn
   * (an app-shell answer's whole exchange); `exchange`, where present, names the element two
   * messages share, which the turn list is always around. The name is reported in the facts
   * (diagnostics) and in a page shape; reading uses whichever profile finds turns.
   */
  const PROFILES = Object.freeze([
    {
      name: 'transcript-2026-10',
      turns: 'ol[data-conversation-transcript] > li[data-message-role]',
      role: (turn) => turn.getAttribute('data-message-role'),
      marker: 'ol[data-conversation-transcript], button[data-composer-submit]',
    },
    {
      // Signed in from late September 2026 (the "app shell"): one [data-turn-key] exchange holds
      // a user message and its answer, each a unit whose key ends in :user or :assistant (or,
      // unit-less, a role heading and a user bubble). The turns are the messages; an answer is
      // read as its whole exchange, because its action bar and error alert stand after the
      // unit, inside the exchange (SOURCES.md, turn-key-2026-09).
      name: 'turn-key-2026-09',
      turns: EXCHANGE.messages,
      role: exchangeMessageRole,
      extent: (message, role) => (role === 'assistant' ? outermost(message, EXCHANGE.exchange) ?? message : message),
      exchange: EXCHANGE.exchange,
      marker: '[data-turn-key]',
    },
    {
      name: 'section-2026-08',
      turns: 'section[data-testid^="conversation-turn-"]',
      role: authorRole,
      marker: 'section[data-testid^="conversation-turn-"]',
    },
    {
      name: 'article-2026-01',
      turns: 'article[data-testid^="conversation-turn-"]',
      role: authorRole,
      marker: 'article[data-testid^="conversation-turn-"]',
    },
    {
      name: 'message-roles',
      turns: '[data-message-author-role]',
      role: (turn) => turn.getAttribute('data-message-author-role'),
      marker: '[data-message-author-role]',
    },
  ]);

  const SELECTORS = Object.freeze({
    userRole: '[data-message-author-role="user"]',
    authorRole: '[data-message-author-role]',
    // The answer's prose: .markdown (2026-01 to 2026-09), the transcript layout's block, the
    // app shell's markdown root, and the DIL renderer's root (live 2026-09-24 and 2026-10-09).
    assistantText: '.markdown, [data-assistant-markdown], [data-markdown-text-style="assistant-message"], [data-dil-message-id], [class*="DilResponseRoot"]',
    // The unit of an answer, where one exists: read for the tail when no prose block is found
    // (an image-only app-shell answer has no unit key, only its role heading).
    assistantMessage: '[data-message-author-role="assistant"], [data-chatgpt-search-unit-key$=":assistant"], [data-content-search-unit-key$=":assistant"], :has(> [data-conversation-role="assistant"])',
    actionBar: [
      '[data-testid="copy-turn-action-button"]',
      '[data-testid="good-response-turn-action-button"]',
      '[data-testid="bad-response-turn-action-button"]',
      '[data-testid$="-turn-action-button"]',
      '[data-copy-message]',
      '[data-message-actions]',
      // The app shell's bar (after the answer's unit, in its exchange; live 2026-09-28).
      '.turn-action-controls button',
    ],
  });

  // The end-of-response block stands in an answer's last lines: this many characters hold it.
  const LIMITS = Object.freeze({ assistantTailCharsMax: 2048 });

  // A message of an app-shell exchange: `user` or `assistant` by its unit key's suffix, its role
  // heading, its user bubble or its answer prose; null for a part of an outer message.
  function exchangeMessageRole(message) {
    if (message.parentElement?.closest(EXCHANGE.message) != null) return null;
    if (message.matches(ANSWER_PROSE) && !message.matches(EXCHANGE.userMessage)) return loneAnswerRole(message);
    const unitKey = message.getAttribute('data-chatgpt-search-unit-key') ?? message.getAttribute('data-content-search-unit-key') ?? '';
    if (unitKey.endsWith(':user')) return 'user';
    if (unitKey.endsWith(':assistant')) return 'assistant';
    const heading = message.matches('[data-conversation-role]') ? message : message.querySelector('[data-conversation-role]');
    if (heading !== null) return heading.getAttribute('data-conversation-role');
    if (message.matches(EXCHANGE.userMessage) || message.querySelector(EXCHANGE.userMessage) !== null) return 'user';
    return message.querySelector(SELECTORS.assistantText) === null ? null : 'assistant';
  }

  // The answer's prose standing in an exchange outside any message: the temporary group drawn
  // right after Send (an activity line, no user bubble yet, Stop showing; live traces of
  // 2026-10-06, SOURCES.md section 8) is the answer on its way. Only the exchange's first such
  // block counts, and only while the exchange holds no answer unit or answer heading (a
  // unit-less answer's prose stands beside its heading).
  function loneAnswerRole(prose) {
    const exchange = outermost(prose, EXCHANGE.exchange);
    if (exchange === null || exchange.querySelector(ANSWER_MARKS) !== null) return null;
    return exchange.querySelector(ANSWER_PROSE) === prose ? 'assistant' : null;
  }

  // The outermost ancestor of `element` (itself included) matching `selector`, or null.
  function outermost(element, selector) {
    let found = null;
    for (let at = element.closest(selector); at !== null; at = at.parentElement?.closest(selector) ?? null) found = at;
    return found;
  }

  /**
   * Where what a turn shows stands: in the app shell, its whole exchange (an answer still
   * without its unit is drawn after the user message: its status, its error alert, a card),
   * elsewhere the turn itself.
   */
  function areaOf(turnElement) {
    return outermost(turnElement, EXCHANGE.exchange) ?? turnElement;
  }

  function authorRole(turn) {
    return turn.getAttribute('data-turn') ?? turn.getAttribute('data-message-author-role')
      ?? turn.querySelector(SELECTORS.authorRole)?.getAttribute('data-message-author-role') ?? null;
  }

  // The turn list last found: {profile, container, doc}, or null. The container is the
  // nearest element holding every turn; each of its children (a "row") holds one turn or is
  // one (the 2026-08 layout wraps each section in a div). The latest turns are in its last
  // rows. Kept while the container stays on the page and holds two turns or more (with one
  // turn its nearest holder may be that turn's own wrapper).
  let located = null;

  function locateTurns(doc) {
    if (located !== null && located.doc === doc && located.container.isConnected) return located;
    located = null;
    for (const profile of PROFILES) {
      const all = doc.querySelectorAll(profile.turns);
      if (all.length === 0) continue;
      const first = all[0];
      const last = all[all.length - 1];
      let container = first.parentElement;
      while (container !== null && !container.contains(last)) container = container.parentElement;
      // Two messages of one exchange share a holder inside it: the list is around the exchanges.
      const around = profile.exchange === undefined || container === null ? null : outermost(container, profile.exchange);
      if (around !== null) container = around.parentElement;
      if (container === null || first === last) return { profile, container: null, doc };
      located = { profile, container, doc };
      return located;
    }
    return null;
  }

  // Offers the turns from the latest back to `visitor.take(element, role)`, at most `max`
  // user or assistant turns, until it returns true. Each row of the list holds one turn or is
  // one (a row's turns are read from its last). The visitors on the hot paths are made once
  // (no closure per read: this runs for every mutation of the page).
  function eachLatestTurn(doc, max, visitor) {
    const where = locateTurns(doc);
    if (where === null) return;
    const { profile } = where;
    let seen = 0;
    if (where.container !== null) {
      for (let row = where.container.lastElementChild; row !== null && seen < max; row = row.previousElementSibling) {
        if (row.matches(profile.turns)) {
          const offered = offer(profile, row, visitor);
          if (offered === TAKEN_LAST) return;
          seen += offered;
          continue;
        }
        if (row.querySelector(profile.turns) === null) continue;
        const inRow = row.querySelectorAll(profile.turns);
        for (let i = inRow.length - 1; i >= 0 && seen < max; i -= 1) {
          const offered = offer(profile, inRow[i], visitor);
          if (offered === TAKEN_LAST) return;
          seen += offered;
        }
      }
      return;
    }
    const all = doc.querySelectorAll(profile.turns);
    for (let i = all.length - 1; i >= 0 && seen < max; i -= 1) {
      if (all[i].parentElement?.closest(profile.turns)) continue;
      const offered = offer(profile, all[i], visitor);
      if (offered === TAKEN_LAST) return;
      seen += offered;
    }
  }

  // What offer says: not a user or assistant turn (0), a turn taken (1), the visitor's last one (2).
  const TAKEN = 1;
  const TAKEN_LAST = 2;

  function offer(profile, element, visitor) {
    const role = profile.role(element);
    if (role !== 'user' && role !== 'assistant') return 0;
    return visitor.take(profile.extent === undefined ? element : profile.extent(element, role), role) ? TAKEN_LAST : TAKEN;
  }

  // The turn elements from the latest back, at most `max` of them, with their roles.
  function latestTurns(doc, max) {
    const out = [];
    eachLatestTurn(doc, max, {
      take(element, role) {
        out.push({ element, role });
        return false;
      },
    });
    return out;
  }

  // The two latest turns as recentTurns reads them: the latest and its role, and the latest
  // assistant turn among the two. One object, overwritten by every call.
  const recent = {
    latest: null,
    latestRole: null,
    lastAssistant: null,
    take(element, role) {
      if (this.latest === null) {
        this.latest = element;
        this.latestRole = role;
      }
      if (role === 'assistant') this.lastAssistant = element;
      return this.lastAssistant !== null;
    },
  };

  /**
   * The latest turn, its role, and the latest assistant turn among the two latest:
   * `{latest, latestRole, lastAssistant}` (elements or null). The object is the same on every
   * call and is overwritten by the next: read it at once.
   */
  function recentTurns(doc) {
    recent.latest = null;
    recent.latestRole = null;
    recent.lastAssistant = null;
    eachLatestTurn(doc, 2, recent);
    return recent;
  }

  const latestUser = {
    found: null,
    take(element, role) {
      if (role === 'user') this.found = element;
      return this.found !== null;
    },
  };

  // The latest user turn among the `max` latest turns, or null (nothing is built for the turns passed).
  function latestUserTurn(doc, max) {
    latestUser.found = null;
    eachLatestTurn(doc, max, latestUser);
    const { found } = latestUser;
    latestUser.found = null;
    return found;
  }

  // How many user and assistant turns the page holds. Counted again only when the turn list's
  // rows changed (a new turn; page-watch.js says when), never for a mutation inside a turn.
  let counted = { container: null, rows: -1, user: 0, assistant: 0 };

  function countTurns(doc) {
    const where = locateTurns(doc);
    if (where === null) return { user: 0, assistant: 0 };
    const rows = where.container === null ? -2 : WATCH.childListVersion(where.container);
    if (where.container !== null && counted.container === where.container && counted.rows === rows) return counted;
    let user = 0;
    let assistant = 0;
    for (const { role } of latestTurns(doc, Infinity)) {
      if (role === 'user') user += 1;
      else assistant += 1;
    }
    counted = { container: where.container, rows, user, assistant };
    return counted;
  }

  /** How many of the latest `max` user turns contain `needle` (all of them by default). */
  function countUserTurnsContaining(doc, needle, max = Infinity) {
    const wanted = normalizeText(needle);
    let seen = 0;
    let found = 0;
    for (const turn of latestTurns(doc, Infinity)) {
      if (turn.role !== 'user') continue;
      if (normalizeText(turn.element.textContent).includes(wanted)) found += 1;
      seen += 1;
      if (seen >= max) break;
    }
    return found;
  }

  // A finished answer: its action bar shows (copy, good and bad response), or the turn
  // says it is complete (the 2026-10 transcript layout). An app-shell answer is read as its
  // exchange, whose user message has a bar of its own: a control inside a user message never
  // says the answer is finished. `marks`: the turn's elements a caller listed already (in
  // page order, every one matching SELECTORS.actionBar among them), so the turn is not
  // walked again.
  function hasActionBar(turnElement, marks = null) {
    if (turnElement.hasAttribute('data-message-complete')) return true;
    if (marks === null) {
      const first = turnElement.querySelector(ACTION_BAR);
      if (first === null) return false;
      if (!inUserMessage(first, turnElement)) return true;
      const all = turnElement.querySelectorAll(ACTION_BAR);
      for (let i = 0; i < all.length; i += 1) if (!inUserMessage(all[i], turnElement)) return true;
      return false;
    }
    for (let i = 0; i < marks.length; i += 1) if (marks[i].matches(ACTION_BAR) && !inUserMessage(marks[i], turnElement)) return true;
    return false;
  }

  function inUserMessage(element, turnElement) {
    const user = element.closest(EXCHANGE.userMessage);
    return user !== null && user !== turnElement && turnElement.contains(user);
  }

  // SELECTORS.actionBar as one selector.
  const ACTION_BAR = SELECTORS.actionBar.join(', ');

  const BLOCK_TAGS = new Set(['P', 'DIV', 'LI', 'UL', 'OL', 'PRE', 'H1', 'H2', 'H3', 'H4', 'H5', 'H6', 'BLOCKQUOTE', 'TABLE', 'TR', 'SECTION', 'ARTICLE', 'HR', 'BR']);
  const SKIPPED_TAGS = new Set(['SCRIPT', 'STYLE', 'TEMPLATE', 'BUTTON']);

  // The last `max` characters of an element's text with a line break at each block boundary
  // (what innerText gives for the end-of-response block's lines, without the layout innerText
  // forces), read backwards from the end: a long reply costs no more than a short one. The
  // text between two boundaries is read as one string (a Range over its text nodes), so an
  // answer streamed as many small text nodes costs a few strings, not one per node.
  function blockTextTail(element, max) {
    const parts = [];
    let length = 0;
    // The run of text nodes read since the last boundary: from `runStart` to `runEnd`.
    let runStart = null;
    let runEnd = null;
    let node = element;
    while (node.lastChild !== null) node = node.lastChild;
    for (; node !== null && node !== element && length < max; node = previousInside(node, element)) {
      if (node.nodeType === 3) {
        if (SKIPPED_TAGS.has(node.parentElement.tagName)) {
          if (runEnd !== null) parts.push(textBetween(runStart, runEnd));
          runStart = runEnd = null;
          continue;
        }
        runEnd ??= node;
        runStart = node;
        length += node.length;
      } else if (BLOCK_TAGS.has(node.tagName)) {
        if (runEnd !== null) parts.push(textBetween(runStart, runEnd));
        runStart = runEnd = null;
        parts.push('\n');
      }
    }
    if (runEnd !== null) parts.push(textBetween(runStart, runEnd));
    // Each step runs only when it changes something: a streamed answer re-reads this tail
    // on every token, and every copy of it is garbage a collection must clear.
    let text = parts.length === 1 ? parts[0] : parts.reverse().join('');
    if (SPACE_AT_BREAK.test(text)) text = text.replace(SPACES_AROUND_BREAKS, '\n');
    if (text.includes('\n\n')) text = text.replace(BREAK_RUNS, '\n');
    text = text.trim();
    return text.length > max ? text.slice(-max) : text;
  }

  // Made once (a regular expression literal in a function is a new object on every call).
  const SPACE_AT_BREAK = /[ \t]\n|\n[ \t]/;
  const SPACES_AROUND_BREAKS = /[ \t]*\n[ \t]*/g;
  const BREAK_RUNS = /\n{2,}/g;

  // The node before `node` in document order, within `root` (root itself excluded): what a
  // tree walker's previousNode gives, without a walker object per read.
  function previousInside(node, root) {
    if (node.previousSibling === null) return node.parentNode === root ? null : node.parentNode;
    let previous = node.previousSibling;
    while (previous.lastChild !== null) previous = previous.lastChild;
    return previous;
  }

  // The range textBetween reads with, kept: a new one per read would be garbage.
  let textRange = null;

  // The text from the start of text node `first` to the end of text node `last`, as one string.
  function textBetween(first, last) {
    if (textRange === null || textRange.startContainer.ownerDocument !== first.ownerDocument) textRange = first.ownerDocument.createRange();
    textRange.setStart(first, 0);
    textRange.setEnd(last, last.length);
    const text = textRange.toString();
    textRange.collapse(true);
    return text;
  }

  // The tail of a finished answer: of its last prose block (the outer one where blocks nest: a
  // DIL root may hold paragraphs classed markdown), else of its unit, else of the whole turn.
  // `marks`: as for hasActionBar, with every prose block among them.
  function assistantTail(turnElement, marks = turnElement.querySelectorAll(SELECTORS.assistantText)) {
    let block = null;
    for (let i = marks.length - 1; i >= 0 && block === null; i -= 1) if (marks[i].matches(SELECTORS.assistantText)) block = marks[i];
    const source = block !== null ? outermost(block, SELECTORS.assistantText)
      : turnElement.querySelector(SELECTORS.assistantMessage) ?? turnElement;
    return blockTextTail(source, LIMITS.assistantTailCharsMax);
  }

  function layoutOf(doc) {
    const where = locateTurns(doc);
    if (where !== null) return where.profile.name;
    return PROFILES.find((profile) => doc.querySelector(profile.marker) !== null)?.name ?? null;
  }

  globalThis.OrcTurns = Object.freeze({
    PROFILES,
    SELECTORS,
    LIMITS,
    locateTurns,
    latestTurns,
    recentTurns,
    latestUserTurn,
    countTurns,
    countUserTurnsContaining,
    hasActionBar,
    areaOf,
    assistantTail,
    layoutOf,
  });
})();
