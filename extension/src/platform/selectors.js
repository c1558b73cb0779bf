// ChatGPT's page as the content adapter sees it: the read-only functions that turn a
// document into the `facts` object of extension/README.md (the page scan: dialogs, log-in and
// challenge marks, limits; what the adapter cannot name; and whether a submission may
// proceed). Structure first (test ids, roles, the Retry control, a turn's position), text
// second (page-texts.js, every UI language it knows). The turn list is read by turns.js, the
// composer by composer.js, the approval card and the pill by apps.js, the allow-list by
// vocabulary.js, the notices and the latest turn's error card by page-notices.js; page-wide
// notices are read outside the turn list, so reading costs the same on a 400-turn page as on
// a 4-turn one. Classic content script, loaded after page-texts.js, page-watch.js (which
// keeps its page-wide reads between mutations), turns.js, apps.js, composer.js,
// vocabulary.js and page-notices.js and before typing.js and content.js into the same isolated world: it
// defines globalThis.OrcSelectors and touches nothing on the page.
(() => {
  'use strict';

  const TEXTS = globalThis.OrcPageTexts;
  const TURNS = globalThis.OrcTurns;
  const APPS = globalThis.OrcApps;
  const WATCH = globalThis.OrcPageWatch;
  const COMPOSER = globalThis.OrcComposer;
  const VOCABULARY = globalThis.OrcVocabulary;
  const NOTICES = globalThis.OrcPageNotices;
  const { normalizeText } = TEXTS;
  const { PROFILES, locateTurns, recentTurns, countTurns, countUserTurnsContaining, hasActionBar, areaOf, assistantTail, layoutOf } = TURNS;
  const {
    isVisible, label, isEnabled, findComposer, composerText, isComposerEditable, findSendButton, findStopControl, dockOf, draftOf,
  } = COMPOSER;
  const {
    NO_TEXTS, NO_ELEMENTS, notices, noticeTexts, cardText, describeError, turnError, markdownNotice, marksOf, NOT_NOTICE_TAGS, FRAME_TAG,
  } = NOTICES;

  const SELECTORS = Object.freeze({
    ...TURNS.SELECTORS,
    ...COMPOSER.SELECTORS,
    ...NOTICES.SELECTORS,
    // Modal dialogs, and the tool-approval card (inline, no role; apps.js tells it apart): the
    // adapter reads them and never dismisses or answers one.
    dialog: '[role="dialog"], [role="alertdialog"], dialog[open], [data-testid="tool-approval-card"]',
    dialogHeading: 'h1, h2, h3, h4, [data-testid*="title"], [id*="title"]',
    login: ['[data-testid="login-button"]', 'button[data-login-button]', '#modal-no-auth-login', 'a[href*="/auth/login"]'],
    // ChatGPT's own log-in button and no-auth sheet, drawn only for a signed-out visitor
    // (index ids 69422929758 of 2026-09-13 and 56279445925; SOURCES.md section 8): a chat
    // list in the sidebar does not outweigh them.
    ownLogin: '[data-testid="login-button"], #modal-no-auth-login',
    // The logged-out page marks itself (transcript-2026-10, the "wm-app" shell; SOURCES.md).
    loggedOut: '[data-logged-out]',
    // Shown only to a signed-in person: with one, a log-in button proves nothing. The chat
    // history in the sidebar lists the person's own conversations (outweighing a log-in link,
    // not ChatGPT's own log-in button).
    signedIn: ['[data-testid="accounts-profile-button"]', '[data-testid="profile-button"]', 'nav a[href*="/c/"]'],
    challenge: [
      '#challenge-form',
      '#challenge-stage',
      '#cf-challenge-running',
      '.cf-turnstile',
      'iframe[src*="challenges.cloudflare.com"]',
      'script[src*="/cdn-cgi/challenge-platform/"]',
    ],
  });

  const LIMITS = Object.freeze({ ...TURNS.LIMITS, ...NOTICES.LIMITS });

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
    loggedOut: SELECTORS.loggedOut,
  });

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
      texts: NO_TEXTS, dialogs: NO_ELEMENTS, login: false, ownLogin: false, loggedOut: false, signedIn: false, history: false, challenge: false,
      latest: null, latestNotices: NO_TEXTS, latestMarks: NO_ELEMENTS, beside: NO_ELEMENTS,
    };
    if (doc.body === null) return found;
    const where = locateTurns(doc);
    const outside = WATCH.outsideTurns(doc, where?.container ?? null, walkOutside);
    found.texts = outside.aroundTurns ? noticeTexts(outside.holders) : outside.texts;
    found.dialogs = outside.dialogs;
    found.login = outside.login.some(isVisible);
    found.ownLogin = found.login && outside.login.some((element) => element.matches(SELECTORS.ownLogin) && isVisible(element));
    found.loggedOut = outside.loggedOut;
    found.signedIn = outside.signedIn;
    found.history = outside.history;
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
  // the list): {holders, texts, aroundTurns, dialogs, login, loggedOut, signedIn, history, challenge}. It reads
  // only the DOM; scanPage reads what a mutation cannot say on every call: whether a log-in
  // control is visible (styles), and, when a notice holder contains the turn list, every
  // holder's text.
  function walkOutside(doc, container) {
    const scan = { holders: [], texts: [], aroundTurns: false, dialogs: [], login: [], loggedOut: false, signedIn: false, history: false, challenge: false };
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
        if (element.querySelector('a[href*="/c/"]') !== null) scan.history = true;
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
   * `/uc/<id>`); or a log-in control with nothing only a signed-in person sees (an account
   * button; a chat list in the sidebar outweighs a log-in link, not ChatGPT's own log-in
   * button or no-auth sheet), except on a conversation's address whose turns are still loading (that page is read once they show, or fails closed when they never do).
   * A logged-out page is never typed into for managed work: ChatGPT offers it no apps, so a
   * worker there could never call the orchestrator's tools, and the conversation is not the
   * person's.
   */
  function isLoggedOut(doc, scan, dialog, userTurns) {
    if (dialog?.kind === 'login' || scan.loggedOut || LOGGED_OUT_PATH.test(doc.location?.pathname ?? '')) return true;
    if (scan.signedIn || !(scan.ownLogin || (scan.login && !scan.history))) return false;
    return !(userTurns === 0 && onConversationPath(doc));
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
