// ChatGPT's page as the content adapter sees it: the selectors not kept by the other readers
// and the read-only functions that turn a document into the `facts` object of
// extension/README.md (error cards, notices, dialogs, log-in and challenge marks, what the
// adapter cannot name, and whether a submission may proceed). Structure first (test ids,
// roles, the Retry control, a turn's position), text second (page-texts.js, every UI language
// it knows). The turn list is read by turns.js, the composer by composer.js, the approval card
// and the pill by apps.js, the allow-list by vocabulary.js; page-wide notices are read outside
// the turn list, so reading costs the same on a 400-turn page as on a 4-turn one. Classic
// content script, loaded after page-texts.js, page-watch.js (which keeps its page-wide reads
// between mutations), turns.js, apps.js, composer.js and vocabulary.js and before content.js
// into the same isolated world: it defines globalThis.OrcSelectors and touches nothing on the
// page.
(() => {
  'use strict';

  const TEXTS = globalThis.OrcPageTexts;
  const TURNS = globalThis.OrcTurns;
  const APPS = globalThis.OrcApps;
  const WATCH = globalThis.OrcPageWatch;
  const COMPOSER = globalThis.OrcComposer;
  const VOCABULARY = globalThis.OrcVocabulary;
  const { normalizeText, isWhitespace } = TEXTS;
  const { PROFILES, locateTurns, recentTurns, countTurns, countUserTurnsContaining, hasActionBar, areaOf, assistantTail, layoutOf } = TURNS;
  const {
    isVisible, label, isEnabled, findComposer, composerText, isComposerEditable, findSendButton, findStopControl, dockOf, draftOf,
  } = COMPOSER;

  const SELECTORS = Object.freeze({
    ...TURNS.SELECTORS,
    ...COMPOSER.SELECTORS,
    // Structural error markers inside a turn: any non-empty text there is an error card.
    errorCard: ['[class*="text-token-text-error"]', '[data-testid*="error-message"]'],
    errorRegion: ['[role="alert"]', '[aria-live="assertive"]'],
    // Listed only so the adapter can recognise, and never click, ChatGPT's Retry control (the
    // signed-in layouts' test id, the transcript layout's mark).
    retry: 'button[data-testid="regenerate-thread-error-button"], button[data-conversation-recovery-retry]',
    // Modal dialogs, and the tool-approval card (inline, no role; apps.js tells it apart): the
    // adapter reads them and never dismisses or answers one.
    dialog: '[role="dialog"], [role="alertdialog"], dialog[open], [data-testid="tool-approval-card"]',
    dialogHeading: 'h1, h2, h3, h4, [data-testid*="title"], [id*="title"]',
    login: ['[data-testid="login-button"]', 'button[data-login-button]', '#modal-no-auth-login', 'a[href*="/auth/login"]'],
    // The logged-out page marks itself (transcript-2026-10, the "wm-app" shell; SOURCES.md).
    loggedOut: '[data-logged-out]',
    // Shown only to a signed-in person: with one, a log-in button proves nothing. The chat
    // history in the sidebar lists the person's own conversations.
    signedIn: ['[data-testid="accounts-profile-button"]', '[data-testid="profile-button"]', 'nav a[href*="/c/"]'],
    challenge: [
      '#challenge-form',
      '#challenge-stage',
      '#cf-challenge-running',
      '.cf-turnstile',
      'iframe[src*="challenges.cloudflare.com"]',
      'script[src*="/cdn-cgi/challenge-platform/"]',
    ],
    // Text people or the model wrote (messages, the draft, chat titles in the sidebar): never
    // read as page state, so a reply that says "something went wrong" is not an error.
    authoredText: '.markdown, [data-assistant-markdown], [data-message-author-role="user"], [data-message-role="user"], #prompt-textarea, [contenteditable="true"], textarea, nav, aside, '
      + '[data-markdown-text-style], [data-markdown-text-tone], [data-user-message-bubble], [data-chatgpt-search-unit-key$=":user"], [data-content-search-unit-key$=":user"], [data-dil-message-id], [class*="DilResponseRoot"]',
  });

  // noticeCharsMax: page state is said in short notices; longer text is content, not state.
  const LIMITS = Object.freeze({ ...TURNS.LIMITS, errorTextCharsMax: 200, noticeCharsMax: 300 });
  // A notice drawn as a `.markdown` block holds at most this many elements.
  const NOTICE_ELEMENTS_MAX = 8;

  // ---- Notices: the short texts the page itself shows ----

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
      && element.closest(SELECTORS.authoredText) === null && element.querySelector(FIELDS) === null
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
    if ((approvalCard !== null && approvalCard.contains(card)) || card.closest(SELECTORS.authoredText) !== null) return null;
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

  // A visible dialog among `candidates` other than a tool-approval card (apps.js reads those)
  // and outside the composer's `dock` (a dialog there is the allow-list's: vocabulary.js):
  // {kind: rate_limited | suspicious_activity | login | unknown, heading}.
  function openDialog(doc, candidates, dock = null) {
    for (let i = 0; i < candidates.length; i += 1) {
      const dialog = candidates[i];
      if (APPS.isApprovalCard(dialog) || !isVisible(dialog) || dialog.closest('[data-orc-overlay]') !== null) continue;
      if (dock !== null && dock.contains(dialog)) continue;
      const heading = normalizeText(doc.getElementById(dialog.getAttribute('aria-labelledby') ?? '')?.textContent
        ?? dialog.querySelector(SELECTORS.dialogHeading)?.textContent ?? notices(dialog)[0] ?? '');
      const text = cardText(dialog);
      // A dialog of controls only (a log-in sheet) is named by them.
      const controls = [...dialog.querySelectorAll('button, a')].map(label).filter(Boolean).join(' / ');
      if (text === '' && heading === '' && controls === '') continue;
      const says = (concept) => TEXTS.matchesAny(concept, heading) || TEXTS.matchesAny(concept, text);
      const kind = says('tooManyRequests') ? 'rate_limited' : says('suspiciousActivity') ? 'suspicious_activity'
        : says('sessionExpired') || isLoginDialog(dialog) ? 'login' : 'unknown';
      return { kind, heading: (heading || text || controls).slice(0, LIMITS.errorTextCharsMax) };
    }
    return null;
  }

  // The log-in sheet or modal: by its id (#modal-no-auth-login, #mobile-auth-dialog), or by
  // the log-in controls inside it.
  function isLoginDialog(dialog) {
    return /(?:^|-)(?:no-auth|auth|login)(?:-|$)/.test(dialog.id) || dialog.querySelector(SCAN.login) !== null;
  }

  // Selector lists as one selector each, joined once.
  const SCAN = Object.freeze({
    dialog: SELECTORS.dialog,
    login: SELECTORS.login.join(', '),
    signedIn: SELECTORS.signedIn.filter((selector) => !selector.startsWith('nav ')).join(', '),
    challenge: SELECTORS.challenge.join(', '),
    errorCard: SELECTORS.errorCard.join(', '),
    errorRegion: SELECTORS.errorRegion.join(', '),
    loggedOut: SELECTORS.loggedOut,
  });

  // Every kind of element marksOf lists (the allow-list's marks among them: vocabulary.js).
  const TURN_MARKS = [SCAN.errorCard, SCAN.errorRegion, SCAN.dialog, SELECTORS.assistantText, ...SELECTORS.actionBar, VOCABULARY.SELECTORS.marks].join(', ');

  // The blocks a failed turn's card is drawn as.
  const RETRY_CARDS = `${SCAN.errorCard}, ${ALERT}, [data-conversation-recovery]`;

  // One pass over the page outside its turn list (whose length grows with the conversation):
  // the page's own notices (`texts`), its dialogs, and the marks of a log-in, of a logged-out
  // page, of a signed-in person and of a challenge. The sidebar and other authored text are
  // not read, except whether the sidebar lists the person's own chats. The latest turn's area
  // (turns.js areaOf: an app-shell exchange, else the turn) is read too (it may hold a card):
  // `latest`, `latestNotices` and `latestMarks` (marksOf the area) say which turn and what it
  // shows, `beside` what stands next to it in the turn list (besideLatest). The lists may be
  // shared with page-watch.js's kept pass: read them, never change them.
  function scanPage(doc) {
    const found = {
      texts: NO_TEXTS, dialogs: NO_ELEMENTS, login: false, loggedOut: false, signedIn: false, challenge: false,
      latest: null, latestNotices: NO_TEXTS, latestMarks: NO_ELEMENTS, beside: NO_ELEMENTS,
    };
    if (doc.body === null) return found;
    const where = locateTurns(doc);
    const outside = WATCH.outsideTurns(doc, where?.container ?? null, walkOutside);
    found.texts = outside.aroundTurns ? noticeTexts(outside.holders) : outside.texts;
    found.dialogs = outside.dialogs;
    found.login = outside.login.some(isVisible);
    found.loggedOut = outside.loggedOut;
    found.signedIn = outside.signedIn;
    found.challenge = outside.challenge;
    const latest = where?.container ? recentTurns(doc).latest : null;
    if (latest !== null) {
      const area = areaOf(latest);
      found.latest = latest;
      found.latestNotices = notices(area);
      found.latestMarks = marksOf(area);
      found.beside = besideLatest(area, where.container);
    }
    return found;
  }

  // What stands beside the latest turn's area in the turn list: the siblings of the area and
  // of its ancestors up to its row (a card drawn next to the turn inside the row), then the rows
  // after its row (at most VOCABULARY.LIMITS.trailingRowsMax: a card drawn as a row of its own).
  // Usually nothing: shared when empty.
  function besideLatest(area, container) {
    let beside = NO_ELEMENTS;
    let at = area;
    for (; at.parentElement !== null && at.parentElement !== container; at = at.parentElement) {
      for (let sibling = at.parentElement.firstElementChild; sibling !== null; sibling = sibling.nextElementSibling) {
        if (sibling === at) continue;
        if (beside === NO_ELEMENTS) beside = [];
        beside.push(sibling);
      }
    }
    if (at.parentElement !== container) return beside;
    let rows = 0;
    for (let next = at.nextElementSibling; next !== null && rows < VOCABULARY.LIMITS.trailingRowsMax; next = next.nextElementSibling, rows += 1) {
      if (beside === NO_ELEMENTS) beside = [];
      beside.push(next);
    }
    return beside;
  }

  // The first of the page's notices (outside the turn list, then the latest turn's) that
  // names `concept`, or null.
  function noticeNaming(scan, concept) {
    return firstNaming(scan.texts, concept) ?? firstNaming(scan.latestNotices, concept);
  }

  function firstNaming(texts, concept) {
    for (let i = 0; i < texts.length; i += 1) if (TEXTS.matchesAny(concept, texts[i])) return texts[i];
    return null;
  }

  // The pass outside the turn list (page-watch.js keeps it until the page changes outside
  // the list): {holders, texts, aroundTurns, dialogs, login, loggedOut, signedIn, challenge}. It reads
  // only the DOM; scanPage reads what a mutation cannot say on every call: whether a log-in
  // control is visible (styles), and, when a notice holder contains the turn list, every
  // holder's text.
  function walkOutside(doc, container) {
    const scan = { holders: [], texts: [], aroundTurns: false, dialogs: [], login: [], loggedOut: false, signedIn: false, challenge: false };
    const holders = new Set();
    const reject = (element) => {
      if (element === container) return true;
      if (element.hidden || element.getAttribute('aria-hidden') === 'true') return true;
      if (element.matches(SCAN.challenge)) scan.challenge = true;
      if (element.matches(SCAN.dialog)) scan.dialogs.push(element);
      if (element.matches(SCAN.login)) scan.login.push(element);
      if (!scan.loggedOut && element.matches(SCAN.loggedOut)) scan.loggedOut = true;
      if (!scan.signedIn && element.matches(SCAN.signedIn)) scan.signedIn = true;
      if (element.tagName === 'NAV' || element.tagName === 'ASIDE') {
        if (element.querySelector('a[href*="/c/"]') !== null) scan.signedIn = true;
        return true;
      }
      return NOT_NOTICE_TAGS.test(element.tagName) || FRAME_TAG.test(element.tagName)
        || element.matches(SELECTORS.authoredText);
    };
    const walker = doc.createTreeWalker(doc.body, 0x5 /* SHOW_ELEMENT | SHOW_TEXT */, {
      acceptNode: (node) => (node.nodeType === 1 && reject(node) ? 2 /* FILTER_REJECT */ : 1 /* FILTER_ACCEPT */),
    });
    for (let node = walker.nextNode(); node !== null; node = walker.nextNode()) {
      if (node.nodeType === 3 && node.data.trim() !== '') holders.add(node.parentElement);
    }
    // A holder around the turn list has text that changes with the turns: then every
    // holder's text is read again on every call (in page order).
    scan.holders = [...holders];
    scan.aroundTurns = container !== null && scan.holders.some((holder) => holder.contains(container));
    scan.texts = noticeTexts(scan.holders);
    return scan;
  }

  // facts.missing when nothing is: shared, never changed.
  const NOTHING_MISSING = Object.freeze([]);

  function emptyFacts(url) {
    return {
      url,
      loaded: false,
      layout: null,
      composer: false,
      composerEditable: false,
      composerText: false,
      sendButton: false,
      sendEnabled: false,
      stopButton: false,
      userTurns: 0,
      assistantTurns: 0,
      latestIsAssistant: false,
      lastAssistantDone: false,
      lastAssistantTail: '',
      error: null,
      conversationFull: false,
      loginRequired: false,
      challenge: false,
      usageLimit: null,
      rateLimited: null,
      suspiciousActivity: null,
      dialog: null,
      approval: null,
      composerDraft: null,
      unrecognized: null,
      missing: NOTHING_MISSING,
    };
  }

  // The maximum-length notice: among the page's notices, or, whole, as the latest turn's
  // `.markdown` block.
  function isConversationFull(doc, scan = scanPage(doc), latest = recentTurns(doc).latest) {
    if (noticeNaming(scan, 'conversationFull') !== null) return true;
    const block = latest === null ? null : markdownNotice(scan.latest === latest ? scan.latestMarks : marksOf(areaOf(latest)));
    return block !== null && TEXTS.matchesWhole('conversationFull', block);
  }

  // Whether a stop control shows and whether the last assistant turn shows its action bar, as
  // one string: what tells a generating page from an idle one, cheap enough to read on every
  // mutation.
  function turnEndSignals(doc) {
    const { lastAssistant } = recentTurns(doc);
    const stop = findStopControl(doc) !== null;
    const done = lastAssistant !== null && hasActionBar(lastAssistant);
    return SIGNALS[(stop ? 2 : 0) + (done ? 1 : 0)];
  }

  // The four answers of turnEndSignals, made once (it runs on every mutation).
  const SIGNALS = Object.freeze(['stop:false done:false', 'stop:false done:true', 'stop:true done:false', 'stop:true done:true']);

  // A conversation's address (src/core/urls.js): its turns must be on the page.
  function onConversationPath(doc) {
    return CONVERSATION_PATH.test(doc.location?.pathname ?? '');
  }

  const CONVERSATION_PATH = /\/u?c\/[A-Za-z0-9][A-Za-z0-9_-]*\/?$/;
  // Where ChatGPT keeps the conversations of a visitor who is not logged in.
  const LOGGED_OUT_PATH = /\/uc\/[A-Za-z0-9][A-Za-z0-9_-]*\/?$/;

  /**
   * Logged out: a log-in sheet; the logged-out page's own mark or address (`[data-logged-out]`,
   * `/uc/<id>`); or a log-in control with nothing only a signed-in person sees (a log-in
   * button can show on a signed-in page too), except on a conversation's address whose turns
   * are still loading (that page is read once they show, or fails closed when they never do).
   * A logged-out page is never typed into for managed work: ChatGPT offers it no apps, so a
   * worker there could never call the orchestrator's tools, and the conversation is not the
   * person's.
   */
  function isLoggedOut(doc, scan, dialog, userTurns) {
    if (dialog?.kind === 'login' || scan.loggedOut || LOGGED_OUT_PATH.test(doc.location?.pathname ?? '')) return true;
    return scan.login && !scan.signedIn && !(userTurns === 0 && onConversationPath(doc));
  }

  /**
   * What in the latest turn (its area, `marks`, what stands `beside` it) or around the composer
   * the adapter cannot name (vocabulary.js): `{where, element, what}`, or null. `dock`: the
   * composer's dock (composer.js dockOf), null without a composer.
   */
  function unrecognizedOf(composer, dock, latestArea, marks, beside, approvalCard) {
    const inTurn = latestArea === null ? null : VOCABULARY.unrecognizedInTurn(latestArea, marks, beside, approvalCard);
    if (inTurn !== null || composer === null) return inTurn;
    return VOCABULARY.unrecognizedAroundComposer(composer, dock, approvalCard);
  }

  // A usage-limit notice: its text (a banner's heading and sentence together) and when it
  // says the limit lifts (the first of its lines that names a time), read at `now` (a Date;
  // the clock when null).
  function usageLimitOf(scan, now) {
    if (noticeNaming(scan, 'usageLimit') === null) return null;
    const lines = [...scan.texts, ...scan.latestNotices].filter((notice) => TEXTS.matchesAny('usageLimit', notice));
    const reset = lines.map(TEXTS.readResetTime).find((time) => time !== null) ?? null;
    return { text: lines.join(' ').slice(0, LIMITS.errorTextCharsMax), untilMs: TEXTS.resetAtMs(reset, now ?? new Date()) };
  }

  // The facts of extension/README.md, read at the page's wall-clock time `now` (a Date, the
  // clock when null; it turns a usage notice's "after 4:04 PM" into a time). `ownApp`: the
  // name of the app this extension chooses in the composer (its pill is no draft), null when
  // not known. The assistant tail is reported only once the latest assistant turn is done
  // (its action bar shows): a streaming tail is not state, and reporting it would turn every
  // rendered token into a message. This runs after every burst of mutations: it builds the
  // facts object and what the page shows, and otherwise no lists or closures (every one is
  // garbage).
  function computeFacts(doc, now = null, { ownApp = null } = {}) {
    const facts = emptyFacts(String(doc.location?.href ?? ''));
    if (doc.body === null) return facts;
    const composer = findComposer(doc);
    const send = composer === null ? null : findSendButton(doc, composer);
    const { latest, latestRole, lastAssistant } = recentTurns(doc);
    const counts = countTurns(doc);
    const scan = scanPage(doc);
    const approvalCard = APPS.findApprovalCard(doc, scan.dialogs);
    facts.approval = approvalCard === null ? null : APPS.describeApproval(approvalCard);
    const turnList = locateTurns(doc)?.container ?? null;
    const dock = composer === null ? null : dockOf(composer, turnList);
    const dialog = openDialog(doc, scan.dialogs, dock);
    facts.loaded = doc.readyState === 'complete';
    facts.layout = layoutOf(doc);
    facts.composer = composer !== null;
    facts.composerEditable = composer !== null && isComposerEditable(composer);
    facts.composerText = composer !== null && composerText(composer) !== '';
    facts.composerDraft = composer === null ? null : draftOf(composer, { ownApp });
    facts.sendButton = send !== null;
    facts.sendEnabled = send !== null && isEnabled(send);
    facts.stopButton = findStopControl(doc, composer) !== null;
    facts.userTurns = counts.user;
    facts.assistantTurns = counts.assistant;
    facts.latestIsAssistant = latestRole === 'assistant';
    // What the latest turn shows is read in its area (an app-shell answer's exchange, or a
    // prompt's exchange while its answer has not appeared), the turn itself elsewhere.
    const latestArea = latest === null ? null : areaOf(latest);
    const scanned = scan.latest === latest;
    const latestMarks = latest === null ? NO_ELEMENTS : scanned ? scan.latestMarks : marksOf(latestArea);
    facts.lastAssistantDone = lastAssistant !== null && hasActionBar(lastAssistant, lastAssistant === latest ? latestMarks : null);
    facts.lastAssistantTail = facts.lastAssistantDone && lastAssistant === latest ? assistantTail(lastAssistant, latestMarks) : '';
    const pageFailure = noticeNaming(scan, 'subscriptionFailed');
    facts.error = (latest === null ? null : turnError(latestArea, scanned ? scan.latestNotices : notices(latestArea), latestMarks, approvalCard))
      ?? (pageFailure === null ? null : describeError('subscription_failed', pageFailure, false));
    facts.conversationFull = isConversationFull(doc, scan, latest);
    facts.challenge = scan.challenge || doc.getElementById('challenge-form') !== null
      || TEXTS.matchesAny('challengeTitle', normalizeText(doc.title)) || noticeNaming(scan, 'challenge') !== null;
    facts.loginRequired = !facts.challenge && isLoggedOut(doc, scan, dialog, counts.user);
    facts.usageLimit = usageLimitOf(scan, now);
    facts.rateLimited = dialog?.kind === 'rate_limited' ? { text: dialog.heading } : null;
    const suspicious = dialog?.kind === 'suspicious_activity' ? dialog.heading : noticeNaming(scan, 'suspiciousActivity');
    facts.suspiciousActivity = suspicious === null ? null : { text: suspicious.slice(0, LIMITS.errorTextCharsMax) };
    facts.dialog = dialog?.kind === 'unknown' ? { heading: dialog.heading } : null;
    const unrecognized = unrecognizedOf(composer, dock, latestArea, latestMarks, scanned ? scan.beside : NO_ELEMENTS, approvalCard);
    facts.unrecognized = unrecognized === null ? null : { where: unrecognized.where, what: unrecognized.what };
    const turnsMissing = locateTurns(doc) === null && onConversationPath(doc);
    if (composer === null || turnsMissing) {
      facts.missing = [];
      if (composer === null) facts.missing.push('composer');
      if (turnsMissing) facts.missing.push('turns');
    }
    return facts;
  }

  /**
   * Every check a submission needs before anything is touched, as `{ok: true, composer}` or
   * `{ok: false, code, detail}`: the composer must be there, editable and hold nothing a
   * person put there (only the text this extension typed, `ownText`, and the pill of the app
   * it chooses, `ownApp`, may be in it); an idle submission needs no stop control, a steering
   * one needs one; no approval card, dialog, or anything the adapter cannot name in the latest
   * turn or around the composer (vocabulary.js). No send button is needed yet: the page draws
   * it once text is in.
   */
  function readinessToType(doc, mode, ownText = null, ownApp = null) {
    const composer = findComposer(doc);
    if (composer === null) return refuse('HOST_UI_CHANGED', 'the composer is missing');
    const draft = draftOf(composer, { ownText, ownApp });
    if (draft !== null) return refuse('COMPOSER_BUSY', `the composer holds a draft the extension did not write (${DRAFT_WORDS[draft]})`);
    const stopControl = findStopControl(doc, composer);
    if (mode === 'steer' && (stopControl === null || findSendButton(doc, composer) === null)) {
      return refuse('STEERING_UNAVAILABLE', 'the page offers no send button while generating');
    }
    if (mode === 'idle' && stopControl !== null) return refuse('NOT_IDLE', 'a stop control is present: the conversation is not idle');
    if (!isComposerEditable(composer)) return refuse('HOST_UI_CHANGED', 'the composer is not editable');
    const scan = scanPage(doc);
    const { latest } = recentTurns(doc);
    if (isConversationFull(doc, scan, latest)) return refuse('CONVERSATION_FULL', 'the conversation has reached its maximum length');
    // A tool-approval card waits for a person: nothing is typed beside it.
    const approvalCard = APPS.findApprovalCard(doc, scan.dialogs);
    if (approvalCard !== null) {
      const approval = APPS.describeApproval(approvalCard);
      return refuse('NOT_IDLE', `a tool-approval card waits for a person: ${approval.title ?? approval.app ?? 'approve or deny it'}`);
    }
    const dock = dockOf(composer, locateTurns(doc)?.container ?? null);
    const dialog = openDialog(doc, scan.dialogs, dock);
    // The page cannot take a prompt now; nothing was touched (the daemon retries later).
    if (dialog !== null) return refuse('NOT_IDLE', `a dialog is open: ${dialog.heading}`);
    const latestArea = latest === null ? null : areaOf(latest);
    const scanned = scan.latest === latest;
    const unrecognized = unrecognizedOf(composer, dock, latestArea, latest === null ? NO_ELEMENTS : scanned ? scan.latestMarks : marksOf(latestArea),
      scanned ? scan.beside : NO_ELEMENTS, null);
    if (unrecognized !== null) return refuse('NOT_IDLE', `page not recognized: ${unrecognized.what} in the ${unrecognized.where}`);
    return { ok: true, composer };
  }

  // A draft's kind (composer.js draftOf) in the words of a refusal.
  const DRAFT_WORDS = Object.freeze({
    text: 'text', mention: 'an app mention', upload: 'a file being uploaded', image: 'an image or a file', quote: 'a quoted reply', attachment: 'an attachment',
  });

  /** Whether the facts show a state of the page's own (a stop, a notice, a dialog). */
  function showsOwnState(facts) {
    return facts.challenge || facts.loginRequired || facts.conversationFull || facts.usageLimit !== null
      || facts.rateLimited !== null || facts.suspiciousActivity !== null || facts.dialog !== null || facts.approval !== null;
  }

  function refuse(code, detail) {
    return { ok: false, code, detail };
  }

  globalThis.OrcSelectors = Object.freeze({
    PROFILES,
    SELECTORS,
    LIMITS,
    isEnabled,
    normalizeText,
    findComposer,
    composerText,
    isComposerEditable,
    findSendButton,
    findStopControl,
    countUserTurnsContaining,
    isConversationFull,
    readinessToType,
    showsOwnState,
    emptyFacts,
    computeFacts,
    turnEndSignals,
  });
})();
