// What the content adapter knows it is looking at, as an allow-list (issue 27): in the latest
// turn and around the composer, every control (a button, a form, a field, a menu, a switch,
// anything with a control's role), every dialog, alert and card-like container must be one
// the adapter can name, or the page is not recognized and nothing is typed into it. Named by
// structure: the answer's prose and the user's message (their own buttons: copy code, show
// more), the action bar (by its marks, and the buttons beside them), status lines and
// disclosure buttons (thinking, tool rows) with the buttons beside them ("Skip"), an error card (an alert or error-styled block
// with at most a Retry and one more button, no form or field), the Retry control, images and
// their previews, citations, code blocks, the tool-approval card (apps.js), and the
// composer's own controls (composer.js), a link-like control in a sentence of the fine print
// below the composer. Words are the last signal, and only to recognize a
// notice that stops typing anyway (a limit, the maximum length, an error). The rest of the
// page (sidebar, header) is never a reason to refuse. Reads only the latest turn's area, the
// rows after it and the composer's dock (read again only once the dock changed: page-watch.js):
// it costs the same on a 400-turn page as on a short one. Classic content script, loaded after page-texts.js, turns.js, apps.js and composer.js
// and before page-notices.js and selectors.js into the same isolated world: it defines
// globalThis.OrcVocabulary and touches nothing on the page.
(() => {
  'use strict';

  const TEXTS = globalThis.OrcPageTexts;
  const TURNS = globalThis.OrcTurns;
  const COMPOSER = globalThis.OrcComposer;
  const WATCH = globalThis.OrcPageWatch;
  const { normalizeText } = TEXTS;

  // What is looked at: controls, fields, frames, dialogs and other roles a person acts on
  // (CONTROLS), and containers classed or tested as cards, banners, toasts, modals or
  // callouts (CARD_LIKE; the exact token is checked in isCardLike).
  const CONTROLS = [
    'button', 'form', 'input', 'select', 'textarea', 'details', 'summary', 'dialog', 'iframe', 'object', 'embed',
    '[contenteditable]:not([contenteditable="false"])',
    ...['button', 'dialog', 'alertdialog', 'alert', 'menu', 'menubar', 'listbox', 'radiogroup', 'radio', 'checkbox',
      'switch', 'textbox', 'combobox', 'slider', 'spinbutton', 'tablist', 'form', 'status', 'option', 'menuitem']
      .map((role) => `[role="${role}"]`),
  ].join(', ');
  const CARD_LIKE = ['card', 'banner', 'toast', 'modal', 'callout']
    .flatMap((word) => [`[class*="${word}"]`, `[data-testid*="${word}"]`]).join(', ');

  const SELECTORS = Object.freeze({
    marks: `${CONTROLS}, ${CARD_LIKE}`,
    controls: CONTROLS,
    prose: TURNS.SELECTORS.assistantText,
    userMessage: '[data-message-author-role="user"], [data-message-role="user"], [data-user-message-bubble], [data-chatgpt-search-unit-key$=":user"], [data-content-search-unit-key$=":user"], [data-markdown-text-tone="user-message"]',
    actionBar: TURNS.SELECTORS.actionBar.join(', '),
    status: '[role="status"], [aria-busy="true"], [data-streaming-response-status]',
    statusHeader: 'button[aria-expanded]:not([aria-haspopup]), [data-streaming-response-status]',
    errorCard: '[role="alert"], [aria-live="assertive"], [class*="text-token-text-error"], [data-testid*="error-message"], [data-conversation-recovery]',
    retry: 'button[data-testid="regenerate-thread-error-button"], button[data-conversation-recovery-retry]',
    toolRow: '[class*="tool-message"]',
    picture: 'img, picture, canvas, video',
    code: 'pre',
    // Kinds that are never part of text people or the model wrote, nor of a message's own bar.
    strict: 'form, dialog, iframe, object, embed, select, textarea, [contenteditable]:not([contenteditable="false"]), '
      + '[role="dialog"], [role="alertdialog"], [role="alert"], [role="form"], [role="textbox"], [role="combobox"], [role="listbox"], '
      + '[role="menu"], [role="radiogroup"], [role="switch"], [role="slider"], [role="spinbutton"]',
    fields: 'form, input:not([type="hidden"]), select, textarea, iframe, dialog, [role="dialog"], [role="alertdialog"], [contenteditable]:not([contenteditable="false"])',
  });

  // Selectors joined once (a selector built on every read is garbage, and parsed again).
  const AUTHORED = `${SELECTORS.prose}, ${SELECTORS.userMessage}`;
  const NOT_A_SENTENCE = `${SELECTORS.controls}, ${SELECTORS.errorCard}`;
  const PERSONS_FILE = `${SELECTORS.picture}, ${COMPOSER.SELECTORS.upload}`;
  // The `@` mention list a person (or content.js, choosing the app) opened over the composer.
  const MENTION_LIST = globalThis.OrcApps.SELECTORS.mentionList;

  // A card-like class or test id token: card, banner, toast, modal or callout as a word of it.
  const CARD_TOKEN = /(?:^|[-_/:])(?:card|banner|toast|modal|callout)(?:$|[-_])/i;
  // Test ids of a message's images and citations.
  const PICTURE_TEST_ID = /image|picture|photo/i;
  const CITATION_TEST_ID = /citation|source|webpage|search-result/i;

  const LIMITS = Object.freeze({
    // An error card offers at most this many buttons (Retry, and "Start new chat" or a help link).
    errorCardButtonsMax: 2,
    // A button belongs to the action bar when an ancestor this close (its group, a tooltip
    // wrapper around it) holds one of the bar's marks and no prose.
    actionBarLevelsMax: 2,
    // A code block's own buttons (copy, edit) stand this close to its <pre>.
    codeLevelsMax: 4,
    // A notice's button: the nearest ancestor with words of its own, this close.
    noticeLevelsMax: 3,
    noticeCharsMax: 300,
    // Read before normalizing: a notice's words with their white space.
    noticeWordsReadMax: 1_200,
    // The rows after the latest turn's row read with it (a card drawn as a row of its own).
    trailingRowsMax: 4,
    // A descriptor of what was not recognized: its label, at most this long.
    labelCharsMax: 40,
  });

  // The page states whose notices may carry buttons of their own ("Start new chat", "Upgrade").
  const NOTICE_CONCEPTS = ['usageLimit', 'conversationFull', 'subscriptionFailed', 'tooManyRequests', 'suspiciousActivity', 'sessionExpired',
    'deliveryTimeout', 'somethingWentWrong', 'connectionInterrupted', 'messageStreamError', 'thinkingFailed', 'stoppedThinking', 'appUnavailable'];

  function isCardLike(element) {
    for (const token of element.classList) if (CARD_TOKEN.test(token)) return true;
    const testId = element.getAttribute('data-testid');
    return testId !== null && CARD_TOKEN.test(testId);
  }

  // Whether `element`, which matched SELECTORS.marks, is a mark: a control, or a container
  // whose class or test id has a card-like word as a token (not merely inside one).
  function isMark(element) {
    return element.matches(SELECTORS.controls) || isCardLike(element);
  }

  function isStrict(element) {
    if (element.tagName === 'INPUT') return !(element.type === 'hidden' || (element.type === 'checkbox' && element.disabled));
    return element.matches(SELECTORS.strict);
  }

  function isVisible(element) {
    return COMPOSER.isVisible(element);
  }

  // The element's closest ancestor (itself included) matching `selector` inside `area`, or null.
  function within(element, selector, area) {
    const found = element.closest(selector);
    return found !== null && area.contains(found) ? found : null;
  }

  // Whether climbing from `element` to its ancestor `at` stays inside `area`: below it, or
  // `area` itself when it is `open` (an element standing beside the latest turn is a part of
  // the row, like a wrapper; the latest turn's own area is the whole turn, never a part).
  function inside(at, area, open) {
    return at !== null && (at === area ? open : area.contains(at));
  }

  // A button of the answer's (or the user message's) action bar: an ancestor this close holds
  // a mark of the bar and no prose.
  function inActionBar(element, area, open) {
    let at = element;
    for (let level = 0; level <= LIMITS.actionBarLevelsMax && inside(at, area, open); level += 1) {
      if (at.matches(SELECTORS.actionBar)) return true;
      if (level > 0 && at.querySelector(SELECTORS.actionBar) !== null && at.querySelector(SELECTORS.prose) === null) return true;
      at = at.parentElement;
    }
    return false;
  }

  // A button of a status header (the reasoning header "Thinking" with its "Skip" or "Answer
  // now"): an ancestor this close holds a disclosure button or the streaming status, and no prose.
  function inStatusHeader(element, area, open) {
    let at = element.parentElement;
    for (let level = 0; level < LIMITS.actionBarLevelsMax && inside(at, area, open); level += 1) {
      if (at.querySelector(SELECTORS.statusHeader) !== null && at.querySelector(SELECTORS.prose) === null) return true;
      at = at.parentElement;
    }
    return false;
  }

  function nearCode(element, area) {
    let at = element.parentElement;
    for (let level = 0; level < LIMITS.codeLevelsMax && at !== null && area.contains(at); level += 1) {
      if (at.querySelector(SELECTORS.code) !== null) return true;
      at = at.parentElement;
    }
    return false;
  }

  // An element's words outside its buttons, normalized; null past LIMITS.noticeCharsMax
  // characters (a notice is short: longer text is content, and is not read further).
  function ownWords(element) {
    let text = '';
    let node = element.firstChild;
    while (node !== null) {
      if (node.nodeType === 1 && node.tagName !== 'BUTTON' && node.firstChild !== null) {
        node = node.firstChild;
        continue;
      }
      if (node.nodeType === 3) {
        text += node.data;
        if (text.length > LIMITS.noticeWordsReadMax) return null;
      }
      while (node !== element && node.nextSibling === null) node = node.parentNode;
      node = node === element ? null : node.nextSibling;
    }
    return normalizeText(text);
  }

  // Whether `text` is a notice of a page state the adapter knows.
  function namesKnownState(text) {
    if (text === null || text === '' || text.length > LIMITS.noticeCharsMax) return false;
    for (let i = 0; i < NOTICE_CONCEPTS.length; i += 1) {
      if (TEXTS.matchesAny(NOTICE_CONCEPTS[i], text) || TEXTS.matchesWhole(NOTICE_CONCEPTS[i], text)) return true;
    }
    return false;
  }

  // A control of a notice the adapter knows by its words: the nearest ancestor with words of
  // its own (at most LIMITS.noticeLevelsMax up, inside `root`) names a known page state.
  function ofKnownNotice(element, root) {
    let at = element.parentElement;
    for (let level = 0; level < LIMITS.noticeLevelsMax && at !== null && root.contains(at); level += 1) {
      const words = ownWords(at);
      if (words !== '') return namesKnownState(words);
      at = at.parentElement;
    }
    return false;
  }

  // A control inside a sentence of the page's fine print below the composer ("ChatGPT can make
  // mistakes. Check important info. See Cookie Preferences."): its parent holds words of its
  // own right beside it, and is no card, alert or status line.
  function inFinePrint(element) {
    const sentence = element.parentElement;
    if (sentence === null || sentence.matches(NOT_A_SENTENCE) || isCardLike(sentence)) return false;
    for (let node = sentence.firstChild; node !== null; node = node.nextSibling) {
      if (node.nodeType === 3 && normalizeText(node.data) !== '') return true;
    }
    return false;
  }

  // An error card: an alert or error-styled block with no field or form inside and at most
  // LIMITS.errorCardButtonsMax buttons (Retry and one more).
  function isErrorCard(element) {
    return element.matches(SELECTORS.errorCard) && element.querySelector(SELECTORS.fields) === null
      && element.getElementsByTagName('button').length <= LIMITS.errorCardButtonsMax;
  }

  // A message's own button that is not in its action bar: an image's preview, a citation, a
  // code block's copy, a tool row's header, a disclosure (thinking, a tool call's details).
  function isMessageButton(element, area) {
    const testId = element.getAttribute('data-testid') ?? '';
    if (PICTURE_TEST_ID.test(testId) || CITATION_TEST_ID.test(testId)) return true;
    if (element.querySelector(SELECTORS.picture) !== null) return true;
    const popup = element.getAttribute('aria-haspopup');
    if (element.hasAttribute('aria-expanded') && (popup === null || popup === 'false')) return true;
    return within(element, SELECTORS.toolRow, area) !== null || nearCode(element, area);
  }

  /**
   * The verdict on one mark of the latest turn's area (or of an element beside it: `open`):
   * 'known', 'known-subtree' (known with everything inside it), or 'unknown'.
   */
  function latestTurnVerdict(mark, area, open) {
    // The most common marks first: the action bar's own buttons.
    if (mark.matches(SELECTORS.actionBar)) return 'known';
    if (within(mark, AUTHORED, area) !== null) return isStrict(mark) ? 'unknown' : 'known';
    if (mark.matches(SELECTORS.errorCard)) return isErrorCard(mark) || ofKnownNotice(mark, area) ? 'known-subtree' : 'unknown';
    if (mark.matches(SELECTORS.status)) return 'known';
    const isButton = mark.tagName === 'BUTTON' || mark.getAttribute('role') === 'button';
    if (isButton) {
      if (mark.matches(SELECTORS.retry) || inActionBar(mark, area, open) || within(mark, SELECTORS.status, area) !== null) return 'known';
      if (inStatusHeader(mark, area, open)) return 'known';
      if (isMessageButton(mark, area) || ofKnownNotice(mark, area)) return 'known';
      return 'unknown';
    }
    if (mark.tagName === 'INPUT' && mark.type === 'hidden') return 'known';
    if (!isMark(mark)) return 'known';
    if (isCardLike(mark) && !mark.matches('[role]') && namesKnownState(ownWords(mark))) return 'known-subtree';
    return 'unknown';
  }

  /**
   * The first mark of the latest turn that the adapter cannot name, or null:
   * `{where: 'latest turn', element, what}` (`what`: describe's words for it).
   * `area`: the latest turn's area (turns.js areaOf); `marks`: every element of it matching
   * SELECTORS.marks, in page order (selectors.js lists them once per read with the turn's
   * other marks); `beside`: the elements next to it in the turn list (beside it in its row,
   * the rows after it); `approvalCard`: the tool-approval card found (apps.js), known with
   * everything inside it.
   */
  function unrecognizedInTurn(area, marks, beside, approvalCard) {
    const found = firstUnknown(area, false, marks, approvalCard);
    if (found !== null) return found;
    for (let i = 0; i < beside.length; i += 1) {
      const row = beside[i];
      const own = row.matches(SELECTORS.marks) ? [row, ...row.querySelectorAll(SELECTORS.marks)] : row.querySelectorAll(SELECTORS.marks);
      const inRow = firstUnknown(row, true, own, approvalCard);
      if (inRow !== null) return inRow;
    }
    return null;
  }

  // The first unknown mark among `marks` of `area` (`open`: see inside).
  function firstUnknown(area, open, marks, approvalCard) {
    let skipped = null;
    for (let i = 0; i < marks.length; i += 1) {
      const mark = marks[i];
      if (skipped !== null && skipped.contains(mark)) continue;
      if (approvalCard !== null && (approvalCard === mark || approvalCard.contains(mark))) {
        skipped = approvalCard;
        continue;
      }
      if (!mark.matches(SELECTORS.marks)) continue;
      const verdict = latestTurnVerdict(mark, area, open);
      if (verdict === 'known-subtree') skipped = mark;
      if (verdict !== 'unknown' || !isVisible(mark)) continue;
      return { where: 'latest turn', element: mark, what: describe(mark, within(mark, AUTHORED, area) === null) };
    }
    return null;
  }

  /**
   * The first mark in the composer's dock (composer.js dockOf) the adapter cannot name, or
   * null: `{where: 'composer', element, what}`. The composer itself (its editor, the pills in it) and its form are the
   * composer's; its controls are known by composer.js; a person's additions (a file, an image,
   * an upload) are a draft, not an unknown; a notice with words the adapter knows is known.
   */
  function unrecognizedAroundComposer(composer, dock, approvalCard) {
    // Kept until anything in the dock changes: while an answer streams it stays quiet.
    const version = WATCH.subtreeVersion(dock);
    const kept = keptAroundComposer;
    if (kept.dock === dock && kept.composer === composer && kept.approvalCard === approvalCard && kept.version === version) return kept.result;
    const result = readAroundComposer(composer, dock, approvalCard);
    keptAroundComposer = { dock, composer, approvalCard, version, result };
    return result;
  }

  // The last read around the composer, and what it was read on.
  let keptAroundComposer = { dock: null, composer: null, approvalCard: null, version: -1, result: null };

  function readAroundComposer(composer, dock, approvalCard) {
    const marks = dock.querySelectorAll(SELECTORS.marks);
    const shell = COMPOSER.shellOf(composer);
    let skipped = null;
    for (let i = 0; i < marks.length; i += 1) {
      const mark = marks[i];
      if (skipped !== null && skipped.contains(mark)) continue;
      if (mark === composer || composer.contains(mark) || mark === shell) continue;
      if (approvalCard !== null && approvalCard.contains(mark)) continue;
      const verdict = composerVerdict(mark, dock, shell);
      if (verdict === 'known-subtree') skipped = mark;
      if (verdict !== 'unknown' || !isVisible(mark)) continue;
      return { where: 'composer', element: mark, what: describe(mark, true) };
    }
    return null;
  }

  function composerVerdict(mark, dock, shell) {
    if (mark.tagName === 'INPUT' && (mark.type === 'hidden' || mark.type === 'file')) return 'known';
    if (!isMark(mark)) return 'known';
    // The `@` mention list's rows: they name apps (apps.js reads them to choose the app).
    if (mark.closest(MENTION_LIST) !== null && !isStrict(mark)) return 'known';
    const isButton = mark.tagName === 'BUTTON' || mark.getAttribute('role') === 'button';
    if (isButton) {
      if (COMPOSER.isComposerControl(mark) || ofKnownNotice(mark, dock)) return 'known';
      if (!shell.contains(mark) && inFinePrint(mark)) return 'known';
      // A person's file or image is often a button (a tile), or stands in a file's tile with
      // its Remove button: the draft says so.
      if (!shell.contains(mark)) return 'unknown';
      return mark.querySelector(PERSONS_FILE) !== null || mark.closest(COMPOSER.SELECTORS.fileTile) !== null ? 'known' : 'unknown';
    }
    if (mark.matches('[role="status"]')) {
      const words = ownWords(mark);
      return words === '' || namesKnownState(words) ? 'known' : 'unknown';
    }
    if ((mark.matches('[role="alert"]') || isCardLike(mark)) && namesKnownState(ownWords(mark))) return 'known-subtree';
    return 'unknown';
  }

  /**
   * A descriptor of an element for people: its tag, role, test id, card-like class tokens,
   * and, with `labelled` (outside text people or the model wrote), its label (at most
   * LIMITS.labelCharsMax characters). A form says how many buttons it offers. Without the
   * label it holds no words of the page (page-shape.js reports it so).
   */
  function describe(element, labelled) {
    let text = element.tagName.toLowerCase();
    const role = element.getAttribute('role');
    if (role !== null) text += `[role=${role.slice(0, 20)}]`;
    const type = element.tagName === 'INPUT' ? element.getAttribute('type') : null;
    if (type !== null) text += `[type=${type.slice(0, 12)}]`;
    const testId = element.getAttribute('data-testid');
    if (testId !== null) text += `[data-testid=${testId.slice(0, 40)}]`;
    for (const token of element.classList) if (CARD_TOKEN.test(token) && token.length <= 40) text += `.${token}`;
    if (element.tagName === 'FORM') text += ` (${element.getElementsByTagName('button').length} buttons)`;
    const name = !labelled ? '' : normalizeText(element.getAttribute('aria-label') || (element.childElementCount <= 3 ? element.textContent : '') || '');
    if (name !== '') text += ` "${name.length > LIMITS.labelCharsMax ? `${name.slice(0, LIMITS.labelCharsMax)}…` : name}"`;
    return text;
  }

  globalThis.OrcVocabulary = Object.freeze({
    SELECTORS,
    LIMITS,
    unrecognizedInTurn,
    unrecognizedAroundComposer,
    describe,
  });
})();
