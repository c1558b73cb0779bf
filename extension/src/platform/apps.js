// ChatGPT's developer apps as the content adapter sees them (/work/shared/notes/chatgpt-apps.md
// sections 1.2 and 2.2, test/fixtures/pages/SOURCES.md): the tool-approval card a person must
// answer, the app's pill in the composer, and the rows of the `@` mention popover. Read-only:
// choosing the app (typing `@`, the arrow keys, Enter) is content.js's, and the approval card
// is never clicked nor sent a key by anything in the extension (approving a tool is the
// person's decision). The card is known in every shape seen since 2025: by its test id
// (August 2026), as a dialog titled "Allow ChatGPT to use <App>?" (older builds), and as the
// October 2026 container card (a `@container/approval-card` div in the assistant turn, its
// title in an inner `role=alert`, a form of buttons, no test id, no dialog role; live traces
// of 2026-10-06 quoted in thaiGO2003/omp-codex-web-stability). Structure first: a container
// classed as an approval card, or a form of several buttons in the latest answer whose card
// holds an alert, is a card whatever its words. Classic content script, loaded after
// page-texts.js and turns.js and before composer.js and selectors.js into the same isolated
// world: it defines globalThis.OrcApps.
(() => {
  'use strict';

  const TEXTS = globalThis.OrcPageTexts;
  const { normalizeText } = TEXTS;

  const SELECTORS = Object.freeze({
    // The inline card (Aug 2026 on); older builds drew a [role="dialog"] with the same title.
    approvalCard: '[data-testid="tool-approval-card"]',
    approvalDialog: '[role="dialog"], [role="alertdialog"]',
    approvalTitle: 'h1, h2, h3, h4, [data-testid*="title"], [id*="title"], .font-semibold',
    // Where an inline card may stand in the latest rows of the turn list: the test id's card,
    // a container classed as an approval card (October 2026), a form of buttons.
    inlineCandidates: '[data-testid="tool-approval-card"], [class*="approval"], form',
    // The October card's title line and its optional safety warning are alerts inside it.
    alert: '[role="alert"]',
    // The chosen app in the composer: the ProseMirror node of 2026 (data-inline-selection-pill,
    // data-symbol="ecosystemMention", data-id="plugin:asdk_app_<hex>", data-keyword = its name)
    // and the October 2026 mention (app-mention-path="app://…", app-mention-display-name = its
    // name, contenteditable="false"; thaiGO2003/omp-codex-web-stability, 2026-10-06).
    pill: '[data-id^="plugin:"][data-keyword], [data-symbol="ecosystemMention"][data-keyword], [app-mention-path^="app://"][contenteditable="false"]',
    // The `@` popover's rows (recent prompts share the class) and the keyboard's current row:
    // the older popover's menu items, and the mention list of the app shell
    // ([data-mention-list-scroll-area] > button[data-list-navigation-item]; index ids
    // 70106395240, SOURCES.md section 8).
    mentionList: '[data-mention-list-scroll-area]',
    mentionRow: '.__menu-item[tabindex="0"], [data-mention-list-scroll-area] [data-list-navigation-item="true"]',
    highlighted: '[data-highlighted]',
  });

  // A class token naming an approval card (`@container/approval-card`, `approval-card`).
  const APPROVAL_CLASS = /approval/i;
  // A title is a line: longer text in the card is its description, not its title.
  const TITLE_CHARS_MAX = 160;
  // An approval card's button labels travel in the facts, at most this many and this long.
  const BUTTONS_MAX = 6;
  const BUTTON_LABEL_CHARS_MAX = 60;
  // The app's name as reported (the protocol's `detail` is capped at 200 characters too).
  const APP_NAME_CHARS_MAX = 80;
  // A card's safety warning ("Suspicious Instruction: …") as reported.
  const WARNING_CHARS_MAX = 120;
  // A user turn within this many latest turns bounds where a current card may stand.
  const LATEST_TURNS_SCANNED_MAX = 8;
  // A form of choices is a card's when it offers at most this many buttons and at least
  // APPROVAL_BUTTONS_MIN (allow and deny); its card is the form's nearest ancestor holding
  // an alert, at most CARD_LEVELS_MAX levels up.
  const APPROVAL_BUTTONS_MIN = 2;
  const APPROVAL_BUTTONS_MAX = 8;
  const CARD_LEVELS_MAX = 3;

  function isVisible(element) {
    return element.isConnected && (typeof element.checkVisibility !== 'function' || element.checkVisibility());
  }

  function label(element) {
    return normalizeText(element.getAttribute('aria-label') || element.textContent || '');
  }

  // The card's title line: the first short text element naming the approval.
  function titleOf(card) {
    const named = card.getAttribute('aria-labelledby');
    const byId = named ? card.ownerDocument.getElementById(named) : null;
    const candidates = [byId, ...card.querySelectorAll(SELECTORS.approvalTitle), ...card.querySelectorAll('div, p, span')];
    for (const element of candidates) {
      if (element === null || element.closest('button') !== null) continue;
      const text = normalizeText(element.textContent);
      if (text !== '' && text.length <= TITLE_CHARS_MAX && TEXTS.matchesAny('approvalTitle', text)) return text;
    }
    return null;
  }

  // The first line of a card's alert (the October card's title, in whatever language), or null.
  function alertLine(card) {
    const alert = card.querySelector(SELECTORS.alert);
    if (alert === null) return null;
    for (const element of [alert, ...alert.querySelectorAll('p, div, span, h1, h2, h3, h4')]) {
      if (element.closest('button') !== null) continue;
      const own = element === alert && alert.childElementCount > 0 ? '' : normalizeText(element.textContent);
      if (own !== '' && own.length <= TITLE_CHARS_MAX) return own;
    }
    return null;
  }

  function hasApprovalClass(element) {
    for (const token of element.classList) if (APPROVAL_CLASS.test(token)) return true;
    return false;
  }

  // How many buttons `root` holds, counted up to `max + 1`.
  function buttonsIn(root, max) {
    const buttons = root.getElementsByTagName('button');
    return Math.min(buttons.length, max + 1);
  }

  // The card a form of choices belongs to: its nearest ancestor (at most CARD_LEVELS_MAX up)
  // holding an alert, or the form itself.
  function cardOfForm(form) {
    let at = form;
    for (let level = 0; level < CARD_LEVELS_MAX && at.parentElement !== null; level += 1) {
      at = at.parentElement;
      if (at.querySelector(SELECTORS.alert) !== null) return at;
      if (at.hasAttribute('data-turn-key') || at.hasAttribute('data-message-author-role') || at.hasAttribute('data-turn')) break;
    }
    return form;
  }

  /**
   * The approval card `element` is (itself, or the card of the form it is), or null: a card
   * by its test id; a dialog titled as one; a container classed as an approval card that
   * offers a button; a form of APPROVAL_BUTTONS_MIN to APPROVAL_BUTTONS_MAX buttons whose card
   * holds an alert or an approval title (in a language the adapter reads).
   */
  function approvalCardOf(element) {
    if (element.matches(SELECTORS.approvalCard)) return element;
    if (element.matches(SELECTORS.approvalDialog)) return titleOf(element) !== null ? element : null;
    if (hasApprovalClass(element)) return buttonsIn(element, 1) >= 1 ? element : null;
    if (element.tagName !== 'FORM') return null;
    const buttons = buttonsIn(element, APPROVAL_BUTTONS_MAX);
    if (buttons < APPROVAL_BUTTONS_MIN || buttons > APPROVAL_BUTTONS_MAX) return null;
    const card = cardOfForm(element);
    return card.querySelector(SELECTORS.alert) !== null || titleOf(card) !== null ? card : null;
  }

  /** Whether `element` is a tool-approval card (in any of its shapes). */
  function isApprovalCard(element) {
    return approvalCardOf(element) === element;
  }

  // After the latest user turn (or anywhere on a page without one): a card above it belongs
  // to an exchange already answered.
  function isCurrent(card, latestUser) {
    if (latestUser === null || latestUser.contains(card)) return latestUser === null;
    return (latestUser.compareDocumentPosition(card) & 4 /* DOCUMENT_POSITION_FOLLOWING */) !== 0;
  }

  // No inline card: shared, never changed (most reads find none, and build nothing).
  const NO_CARDS = Object.freeze([]);

  // The elements that may be or hold a current card: those in the turn list's rows from the
  // latest back to the one holding the latest user turn (at most LATEST_TURNS_SCANNED_MAX
  // rows), never the whole transcript, whose size grows with the conversation. A page whose
  // turn list this reader cannot find is searched whole for the test id's card.
  function inlineCandidates(doc, latestUser) {
    const container = globalThis.OrcTurns.locateTurns(doc)?.container ?? null;
    if (container === null) return doc.querySelectorAll(SELECTORS.approvalCard);
    let cards = NO_CARDS;
    let rows = 0;
    for (let row = container.lastElementChild; row !== null && rows < LATEST_TURNS_SCANNED_MAX; row = row.previousElementSibling) {
      rows += 1;
      if (row.matches(SELECTORS.inlineCandidates)) cards = [...cards, row];
      if (row.querySelector(SELECTORS.inlineCandidates) !== null) cards = [...cards, ...row.querySelectorAll(SELECTORS.inlineCandidates)];
      if (latestUser !== null && row.contains(latestUser)) break;
    }
    return cards;
  }

  /**
   * The approval card waiting on the page, or null. Located among the dialogs the page scan
   * found (`dialogs`) and the latest rows of the turn list, counted only after the latest
   * user turn (a card answered in an older exchange is history).
   */
  function findApprovalCard(doc, dialogs) {
    const latestUser = globalThis.OrcTurns.latestUserTurn(doc, LATEST_TURNS_SCANNED_MAX);
    const inline = inlineCandidates(doc, latestUser);
    if (inline.length === 0 && dialogs.length === 0) return null;
    for (const candidates of [inline, dialogs]) {
      for (let i = 0; i < candidates.length; i += 1) {
        const card = approvalCardOf(candidates[i]);
        if (card !== null && isVisible(card) && isCurrent(card, latestUser)) return card;
      }
    }
    return null;
  }

  /**
   * What a card says: `{app, title, buttons, warning}`. `app`: the name its title gives, or
   * null in a language this reader does not know (then `title` is the title line as shown,
   * for people); `warning`: a second alert's words (the "Suspicious Instruction" warning), or
   * null.
   */
  function describeApproval(card) {
    const named = titleOf(card);
    const title = named ?? alertLine(card);
    const app = named === null ? null : TEXTS.captureOf('approvalTitle', named)?.slice(0, APP_NAME_CHARS_MAX) ?? null;
    const buttons = [...card.querySelectorAll('button')].map(label).filter(Boolean)
      .slice(0, BUTTONS_MAX).map((text) => text.slice(0, BUTTON_LABEL_CHARS_MAX));
    return { app, title, buttons, warning: warningOf(card, title) };
  }

  // The words of an alert in the card other than its title's.
  function warningOf(card, title) {
    for (const alert of card.querySelectorAll(SELECTORS.alert)) {
      const text = normalizeText(alert.textContent);
      if (text !== '' && (title === null || !text.includes(title))) return text.slice(0, WARNING_CHARS_MAX);
    }
    return null;
  }

  /** The approval card waiting on the page, described (describeApproval), or null. */
  function approvalOf(doc, dialogs) {
    const card = findApprovalCard(doc, dialogs);
    return card === null ? null : describeApproval(card);
  }

  // Where the pill stands: inside the composer's editor, or beside a textarea in its form.
  function pillRoot(composer) {
    return composer.closest('form') ?? composer.parentElement ?? composer;
  }

  /** The name of the app a pill stands for. */
  function pillName(pill) {
    return normalizeText(pill.getAttribute('data-keyword') ?? pill.getAttribute('app-mention-display-name') ?? pill.textContent ?? '');
  }

  /** The pill of app `name` in the composer, or null (any app's when `name` is null). */
  function findPill(composer, name) {
    if (composer === null) return null;
    const wanted = name === null ? null : normalizeText(name).toLowerCase();
    for (const pill of pillRoot(composer).querySelectorAll(SELECTORS.pill)) {
      if (wanted === null || pillName(pill).toLowerCase() === wanted) return pill;
    }
    return null;
  }

  /** A pill in the composer of an app other than `ownApp` (any app's when it is null), or null. */
  function othersPill(composer, ownApp) {
    const own = ownApp === null ? null : normalizeText(ownApp).toLowerCase();
    const pills = pillRoot(composer).querySelectorAll(SELECTORS.pill);
    for (let i = 0; i < pills.length; i += 1) if (own === null || pillName(pills[i]).toLowerCase() !== own) return pills[i];
    return null;
  }

  /** The composer's own text: what a person or the extension typed, without app pills. */
  function draftText(composer) {
    if (composer.tagName === 'TEXTAREA') return composer.value;
    if (composer.querySelector(SELECTORS.pill) === null) return composer.textContent;
    const copy = composer.cloneNode(true);
    for (const pill of copy.querySelectorAll(SELECTORS.pill)) pill.remove();
    return copy.textContent;
  }

  /** The visible rows of the `@` popover (recent prompts and apps), top to bottom. */
  function mentionRows(doc) {
    return [...doc.querySelectorAll(SELECTORS.mentionRow)].filter(isVisible);
  }

  // An element of the row whose own text is exactly `name`: an app row names the app on a
  // line of its own; a recent prompt mentioning it holds it inside a longer line.
  function namesExactly(row, name) {
    const wanted = normalizeText(name).toLowerCase();
    for (const element of [row, ...row.querySelectorAll('*')]) {
      if (element.childElementCount === 0 && normalizeText(element.textContent).toLowerCase() === wanted) return true;
    }
    return false;
  }

  /**
   * The popover row of app `{name, description}`, or null: its name on a line of its own and,
   * when a description is set, that description in the row too. More than one such row is
   * ambiguous and also null (choosing must not guess).
   */
  function appRow(doc, app) {
    const description = normalizeText(app.description ?? '').toLowerCase();
    const rows = mentionRows(doc).filter((row) => namesExactly(row, app.name)
      && (description === '' || normalizeText(row.textContent).toLowerCase().includes(description)));
    return rows.length === 1 ? rows[0] : null;
  }

  function isHighlighted(row) {
    return row.matches(SELECTORS.highlighted) && row.getAttribute('data-highlighted') !== 'false';
  }

  globalThis.OrcApps = Object.freeze({
    SELECTORS,
    isApprovalCard,
    approvalCardOf,
    findApprovalCard,
    describeApproval,
    approvalOf,
    findPill,
    othersPill,
    draftText,
    mentionRows,
    appRow,
    isHighlighted,
  });
})();
