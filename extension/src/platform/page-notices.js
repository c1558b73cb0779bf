// The page's own words, as the content adapter reads them: the short notices ChatGPT shows
// (outside what people or the model wrote), and the latest turn's failure: its error card and
// Retry control, found by structure (an error-styled block, an alert, the Retry mark, the one
// button of a failed turn's card) with the words (page-texts.js) only saying which failure
// (an alert whose words are not known is a generic error, not nothing). Lists are built only
// for what a turn holds: this runs on every read. Classic content script, loaded after
// page-texts.js, turns.js, composer.js and vocabulary.js and before selectors.js into the
// same isolated world: it defines globalThis.OrcPageNotices and touches nothing on the page.
(() => {
  'use strict';

  const TEXTS = globalThis.OrcPageTexts;
  const TURNS = globalThis.OrcTurns;
  const VOCABULARY = globalThis.OrcVocabulary;
  const { normalizeText, isWhitespace } = TEXTS;
  const { hasActionBar } = TURNS;
  const { label } = globalThis.OrcComposer;

  const SELECTORS = Object.freeze({
    // Structural error markers inside a turn: any non-empty text there is an error card.
    errorCard: ['[class*="text-token-text-error"]', '[data-testid*="error-message"]'],
    errorRegion: ['[role="alert"]', '[aria-live="assertive"]'],
    // Listed only so the adapter can recognise, and never click, ChatGPT's Retry control (the
    // signed-in layouts' test id, the transcript layout's mark).
    retry: 'button[data-testid="regenerate-thread-error-button"], button[data-conversation-recovery-retry]',
    // Text people or the model wrote (messages, the draft, chat titles in the sidebar): never
    // read as page state, so a reply that says "something went wrong" is not an error.
    authoredText: '.markdown, [data-assistant-markdown], [data-message-author-role="user"], [data-message-role="user"], #prompt-textarea, [contenteditable="true"], textarea, nav, aside, '
      + '[data-markdown-text-style], [data-markdown-text-tone], [data-user-message-bubble], [data-chatgpt-search-unit-key$=":user"], [data-content-search-unit-key$=":user"], [data-dil-message-id], [class*="DilResponseRoot"]',
    assistantText: TURNS.SELECTORS.assistantText,
  });

  // noticeCharsMax: page state is said in short notices; longer text is content, not state.
  const LIMITS = Object.freeze({ errorTextCharsMax: 200, noticeCharsMax: 300 });
  // A notice drawn as a `.markdown` block holds at most this many elements.
  const NOTICE_ELEMENTS_MAX = 8;

  // What people or the model wrote inside a turn (the answer's prose, the user's message): a
  // card there is theirs, not the page's. (SELECTORS.authoredText also names the sidebar's
  // `aside`, and an alert may be an `aside` itself.)
  const AUTHORED_IN_TURN = `${TURNS.SELECTORS.assistantText}, ${VOCABULARY.SELECTORS.userMessage}`;

  // Selector lists as one selector each, joined once.
  const SCAN = Object.freeze({
    errorCard: SELECTORS.errorCard.join(', '),
    errorRegion: SELECTORS.errorRegion.join(', '),
  });

  // What a read found none of: shared, never changed (a read that finds nothing builds nothing).
  const NO_TEXTS = Object.freeze([]);
  const NO_ELEMENTS = Object.freeze([]);

  // The text of each element that directly holds visible text under `root`, outside authored
  // text, buttons, scripts and hidden subtrees, when it is at most LIMITS.noticeCharsMax long.
  // The list may be shared: read it, never change it.
  function notices(root) {
    if (root === null || root.matches(SELECTORS.authoredText)) return NO_TEXTS;
    return noticeTexts(noticeHolders(root));
  }

  // Past this many holders under one root, the holders seen are kept in a set (a root holding
  // that many is rare; below it, a list is searched).
  const HOLDERS_LISTED_MAX = 16;

  // The elements under `root` that directly hold a text node with more than white space, in
  // the order of their first such text node, outside the subtrees skipsNotices rejects (the
  // root itself is always read). A walk by the nodes' own links: no walker, filter or set per read.
  function noticeHolders(root) {
    let holders = NO_ELEMENTS;
    let seen = null;
    let node = root.firstChild;
    while (node !== null) {
      if (node.nodeType === 1 && node.firstChild !== null && !skipsNotices(node)) {
        node = node.firstChild;
        continue;
      }
      if (node.nodeType === 3 && !isBlank(node.data)) {
        const holder = node.parentElement;
        if (holders === NO_ELEMENTS) {
          holders = [holder];
        } else if (holders[holders.length - 1] !== holder && !(seen === null ? holders.includes(holder) : seen.has(holder))) {
          holders.push(holder);
          if (seen !== null) seen.add(holder);
          else if (holders.length > HOLDERS_LISTED_MAX) seen = new Set(holders);
        }
      }
      node = nextOutside(node, root);
    }
    return holders;
  }

  // The node after `node` and its subtree in document order, within `root`, or null.
  function nextOutside(node, root) {
    let at = node;
    while (at !== root && at.nextSibling === null) at = at.parentNode;
    return at === root ? null : at.nextSibling;
  }

  // Whether a text is only white space (what trim() would empty), read in place.
  function isBlank(text) {
    for (let i = 0; i < text.length; i += 1) if (!isWhitespace(text.charCodeAt(i))) return false;
    return true;
  }

  // Tags whose text is never a notice. The patterns of the readers are made once, here and
  // below: a regular expression literal inside a function is a new object on every call.
  const NOT_NOTICE_TAGS = /^(?:SCRIPT|STYLE|NOSCRIPT|TEMPLATE|TEXTAREA|BUTTON|SVG)$/i;

  // A frame's page is not this page's: the pass outside the turn list skips it too.
  const FRAME_TAG = /^IFRAME$/i;

  function skipsNotices(element) {
    return element.hidden || NOT_NOTICE_TAGS.test(element.tagName)
      || element.getAttribute('aria-hidden') === 'true' || element.matches(SELECTORS.authoredText);
  }

  // The texts of notice holders. A holder with many elements inside (an ancestor of the page's
  // content that holds a stray text node) is content, not a notice, and is not read.
  function noticeTexts(holders) {
    let texts = NO_TEXTS;
    for (let i = 0; i < holders.length; i += 1) {
      const element = holders[i];
      if (element.childElementCount > NOTICE_ELEMENTS_MAX) continue;
      const text = shortText(element, LIMITS.noticeCharsMax);
      if (text === null || text === '') continue;
      if (texts === NO_TEXTS) texts = [text];
      else texts.push(text);
    }
    return texts;
  }

  // An element's text normalized, or null when that is longer than `max` characters. The text
  // is read only until it has more than `max` characters that are not whitespace (normalizing
  // keeps each of them), so a long reply costs no more than a notice.
  function shortText(element, max) {
    let solid = 0;
    for (let node = element.firstChild; node !== null; node = node.firstChild ?? nextOutside(node, element)) {
      if (node.nodeType !== 3) continue;
      const { data } = node;
      for (let i = 0; i < data.length; i += 1) {
        if (!isWhitespace(data.charCodeAt(i))) solid += 1;
        if (solid > max) return null;
      }
    }
    const normalized = normalizeText(element.textContent);
    return normalized.length <= max ? normalized : null;
  }

  // A card's text without the labels of its buttons (a button inside a button included).
  const BUTTONS_REJECTED = { acceptNode: (node) => (node.tagName === 'BUTTON' ? 2 /* FILTER_REJECT */ : 1 /* FILTER_ACCEPT */) };

  function cardText(element) {
    const walker = element.ownerDocument.createTreeWalker(element, 0x5 /* SHOW_ELEMENT | SHOW_TEXT */, BUTTONS_REJECTED);
    let text = '';
    for (let node = walker.nextNode(); node !== null; node = walker.nextNode()) if (node.nodeType === 3) text += node.data;
    return normalizeText(text);
  }

  const ERROR_CONCEPTS = [
    ['appUnavailable', 'app_unavailable'],
    ['deliveryTimeout', 'delivery_timeout'],
    ['thinkingFailed', 'thinking_failed'],
    ['stoppedThinking', 'thinking_stopped'],
    ['messageStreamError', 'stream_error'],
    ['connectionInterrupted', 'connection_interrupted'],
    ['subscriptionFailed', 'subscription_failed'],
    ['somethingWentWrong', 'something_went_wrong'],
  ];

  // Which error a notice's text names, or null when it names none this adapter knows. `whole`:
  // the text must be one of the page's notices entire (text inside a `.markdown` block).
  function errorKindOf(text, whole = false) {
    const match = whole ? TEXTS.matchesWhole : TEXTS.matchesAny;
    for (let i = 0; i < ERROR_CONCEPTS.length; i += 1) if (match(ERROR_CONCEPTS[i][0], text)) return ERROR_CONCEPTS[i][1];
    return null;
  }

  function describeError(kind, text, retry) {
    return { kind, text: text.slice(0, LIMITS.errorTextCharsMax), retry };
  }

  // The error card of the latest turn, if any. In order: a Retry control (the structure
  // says "this turn failed" in every language; the text only says which failure), an
  // element the page styles as an error, an alert (whatever its words: an alert in the latest
  // turn that is not an approval card's is an error card, generic when its words are not
  // known), a live region whose text names an error, and a short notice that is the whole of
  // the turn's text (the page draws some notices inside the same `.markdown` block as a
  // reply, so only a notice that is the entire block counts: a reply that merely quotes one
  // is not an error). `turnNotices`: notices(turnElement), when the caller read them already;
  // `marks`: the turn's marks (marksOf); `approvalCard`: the approval card found (its alert is
  // its title, no error). Lists are built only for what the turn holds: this runs on every
  // read, mostly of a turn with no error.
  function turnError(turnElement, turnNotices = notices(turnElement), marks = marksOf(turnElement), approvalCard = null) {
    const retry = retryControlOf(turnElement, marks, approvalCard);
    if (retry !== null) return failedTurnError(turnElement, retry, turnNotices, marks);
    for (let i = nextMark(marks, SCAN.errorCard, 0); i !== -1; i = nextMark(marks, SCAN.errorCard, i + 1)) {
      // The approval card's safety warning is styled as an error: it is the card's, no failure.
      if (approvalCard !== null && approvalCard.contains(marks[i])) continue;
      const text = cardText(marks[i]);
      if (isReportable(text)) return describeError(errorKindOf(text) ?? 'generic', text, false);
    }
    for (let i = nextMark(marks, SCAN.errorRegion, 0); i !== -1; i = nextMark(marks, SCAN.errorRegion, i + 1)) {
      const text = cardText(marks[i]);
      const kind = errorKindOf(text);
      if (!isReportable(text)) continue;
      if (kind !== null) return describeError(kind, text, false);
      if (isAlertCard(marks[i], approvalCard)) return describeError('generic', text, false);
    }
    for (let i = 0; i < turnNotices.length; i += 1) {
      const kind = errorKindOf(turnNotices[i]);
      if (kind !== null) return describeError(kind, turnNotices[i], false);
    }
    const block = markdownNotice(marks);
    const blockKind = block === null ? null : errorKindOf(block, true);
    if (blockKind !== null) return describeError(blockKind, block, false);
    for (let i = nextMark(marks, STATUS_BUTTONS, 0); i !== -1; i = nextMark(marks, STATUS_BUTTONS, i + 1)) {
      const text = normalizeText(marks[i].textContent);
      const kind = text !== '' && text.length <= LIMITS.noticeCharsMax ? errorKindOf(text, true) : null;
      if (kind !== null) return describeError(kind, text, false);
    }
    return null;
  }

  // An alert of the page's own in the latest turn: `role="alert"`, not inside text people or
  // the model wrote, not part of the approval card, with no form or field and at most
  // ERROR_CARD_BUTTONS_MAX buttons (Retry and one more).
  function isAlertCard(element, approvalCard) {
    return element.matches(ALERT) && (approvalCard === null || !approvalCard.contains(element))
      && element.closest(AUTHORED_IN_TURN) === null && element.querySelector(FIELDS) === null
      && element.getElementsByTagName('button').length <= ERROR_CARD_BUTTONS_MAX;
  }

  const ALERT = '[role="alert"]';
  const FIELDS = 'form, input:not([type="hidden"]), select, textarea, iframe';
  const ERROR_CARD_BUTTONS_MAX = 2;

  // A turn with a Retry control failed: the first text near it, among its notices or as its
  // `.markdown` block, that names a failure says which.
  function failedTurnError(turnElement, retry, turnNotices, marks) {
    const candidates = [noticeNear(retry, turnElement), ...turnNotices];
    const block = markdownNotice(marks);
    if (block !== null) candidates.push(block);
    const kindOf = (text) => errorKindOf(text) ?? errorKindOf(text, true);
    const named = candidates.find((text) => kindOf(text) !== null);
    // Retry says the turn failed in every language; a text this reader does not know does
    // not say how, and reads as a failed turn (a fresh prompt follows; Retry is never clicked).
    return describeError(named === undefined ? 'turn_failed' : kindOf(named), named ?? candidates[0] ?? '', true);
  }

  // An error card's text worth reporting: not empty, and not the maximum-length notice
  // (read as conversationFull).
  function isReportable(text) {
    return text !== '' && !TEXTS.matchesAny('conversationFull', text);
  }

  // A turn's status buttons (the reasoning header "Thinking failed" is one), outside its action bar.
  const STATUS_BUTTONS = '[data-streaming-response-status] button, button[aria-expanded]';

  // The turn's Retry control, in a turn without an action bar (a finished answer's action bar
  // may offer a retry of its own, which does not say the turn failed) unless it carries a
  // Retry mark: by its test id or mark; by its place, the one button of an error card (an
  // error-styled block, an alert, a recovery block) or the button right after one; by its
  // label in a language the adapter reads.
  function retryControlOf(turnElement, marks, approvalCard) {
    const first = nextMark(marks, 'button', 0);
    if (first === -1) return null;
    for (let i = first; i !== -1; i = nextMark(marks, 'button', i + 1)) if (marks[i].matches(SELECTORS.retry)) return marks[i];
    if (hasActionBar(turnElement, marks)) return null;
    for (let i = nextMark(marks, RETRY_CARDS, 0); i !== -1; i = nextMark(marks, RETRY_CARDS, i + 1)) {
      const retry = retryOfCard(marks[i], approvalCard);
      if (retry !== null) return retry;
    }
    for (let i = first; i !== -1; i = nextMark(marks, 'button', i + 1)) if (TEXTS.matchesAny('retryLabel', label(marks[i]))) return marks[i];
    return null;
  }

  // The Retry of an error card: its only button, or the one button right after it; null for
  // a card with fields, with more buttons, inside the approval card or in authored text, or
  // saying what is no failure of the turn (the maximum length).
  function retryOfCard(card, approvalCard) {
    if ((approvalCard !== null && approvalCard.contains(card)) || card.closest(AUTHORED_IN_TURN) !== null) return null;
    if (card.querySelector(FIELDS) !== null || !isReportable(cardText(card))) return null;
    const inside = card.getElementsByTagName('button');
    if (inside.length === 1) return inside[0];
    if (inside.length > 1) return null;
    const next = card.nextElementSibling;
    if (next === null) return null;
    if (next.tagName === 'BUTTON') return next;
    const held = next.getElementsByTagName('button');
    return held.length === 1 && next.childElementCount === 1 ? held[0] : null;
  }

  // The text of a turn's only `.markdown` block (among its `marks`), when it is short enough
  // to be a notice (a notice is a paragraph or two: a longer block is a reply and is not
  // read), or null.
  function markdownNotice(marks) {
    const block = nextMark(marks, SELECTORS.assistantText, 0);
    if (block === -1 || nextMark(marks, SELECTORS.assistantText, block + 1) !== -1) return null;
    if (marks[block].getElementsByTagName('*').length > NOTICE_ELEMENTS_MAX) return null;
    const text = shortText(marks[block], LIMITS.noticeCharsMax);
    return text !== null && text !== '' ? text : null;
  }

  // What the readers look for inside a turn, listed in one query (a long answer is walked
  // once per read, not once per kind): its buttons (Retry, status buttons, the action bar's),
  // error-styled elements, live regions, dialogs (the tool-approval card among them), its
  // `.markdown` blocks and the marks of its action bar. In page order; each reader keeps the
  // kind it wants (nextMark).
  function marksOf(turnElement) {
    return turnElement.querySelectorAll(TURN_MARKS);
  }

  // The index of the first of `marks` from `from` on that matches `selector`, or -1.
  function nextMark(marks, selector, from) {
    for (let i = from; i < marks.length; i += 1) if (marks[i].matches(selector)) return i;
    return -1;
  }

  // The text next to a control: that of its nearest ancestor (within the turn) holding any.
  function noticeNear(control, turnElement) {
    for (let element = control.parentElement; element !== null && turnElement.contains(element); element = element.parentElement) {
      const text = cardText(element);
      if (text !== '') return text.slice(0, LIMITS.noticeCharsMax);
    }
    return '';
  }

  // Every kind of element marksOf lists (the allow-list's marks among them: vocabulary.js).
  const TURN_MARKS = [SCAN.errorCard, SCAN.errorRegion, SELECTORS.assistantText, ...TURNS.SELECTORS.actionBar, VOCABULARY.SELECTORS.marks].join(', ');

  // The blocks a failed turn's card is drawn as.
  const RETRY_CARDS = `${SCAN.errorCard}, ${ALERT}, [data-conversation-recovery]`;

  globalThis.OrcPageNotices = Object.freeze({
    SELECTORS,
    LIMITS,
    NO_TEXTS,
    NO_ELEMENTS,
    NOT_NOTICE_TAGS,
    FRAME_TAG,
    notices,
    noticeTexts,
    cardText,
    describeError,
    turnError,
    markdownNotice,
    marksOf,
  });
})();
