// ChatGPT's developer apps as the content adapter sees them (/work/shared/notes/chatgpt-apps.md
// sections 1.2 and 2.2, test/fixtures/pages/SOURCES.md): the tool-approval card a person must
// answer, the app's pill in the composer, and the rows of the `@` mention popover. Read-only:
// choosing the app (typing `@`, the arrow keys, Enter) is content.js's, and the approval card
// is never clicked nor sent a key by anything in the extension (approving a tool is the
// person's decision). Classic content script, loaded after page-texts.js and turns.js and
// before selectors.js into the same isolated world: it defines globalThis.OrcApps.
(() => {
  'use strict';

  const TEXTS = globalThis.OrcPageTexts;
  const { normalizeText } = TEXTS;

  const SELECTORS = Object.freeze({
    // The inline card (Aug 2026 on); older builds drew a [role="dialog"] with the same title.
    approvalCard: '[data-testid="tool-approval-card"]',
    approvalDialog: '[role="dialog"], [role="alertdialog"]',
    approvalTitle: 'h1, h2, h3, h4, [data-testid*="title"], [id*="title"], .font-semibold',
    // The chosen app in the composer (ProseMirror node spec: data-inline-selection-pill,
    // data-symbol="ecosystemMention", data-id="plugin:asdk_app_<hex>", data-keyword = its name).
    pill: '[data-id^="plugin:"][data-keyword], [data-symbol="ecosystemMention"][data-keyword]',
    // The `@` popover's rows (recent prompts share the class) and the keyboard's current row.
    mentionRow: '.__menu-item[tabindex="0"]',
    highlighted: '[data-highlighted]',
  });

  // A title is a line: longer text in the card is its description, not its title.
  const TITLE_CHARS_MAX = 160;
  // An approval card's button labels travel in the facts, at most this many and this long.
  const BUTTONS_MAX = 6;
  const BUTTON_LABEL_CHARS_MAX = 60;
  // The app's name as reported (the protocol's `detail` is capped at 200 characters too).
  const APP_NAME_CHARS_MAX = 80;
  // A user turn within this many latest turns bounds where a current card may stand.
  const LATEST_TURNS_SCANNED_MAX = 8;

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

  /** Whether `element` is a tool-approval card: by test id, or a dialog titled as one. */
  function isApprovalCard(element) {
    if (element.matches(SELECTORS.approvalCard)) return true;
    return element.matches(SELECTORS.approvalDialog) && titleOf(element) !== null;
  }

  // After the latest user turn (or anywhere on a page without one): a card above it belongs
  // to an exchange already answered.
  function isCurrent(card, latestUser) {
    if (latestUser === null || latestUser.contains(card)) return latestUser === null;
    return (latestUser.compareDocumentPosition(card) & 4 /* DOCUMENT_POSITION_FOLLOWING */) !== 0;
  }

  // No inline card: shared, never changed (most reads find none, and build nothing).
  const NO_CARDS = Object.freeze([]);

  // The inline cards that may be current: those in the turn list's rows from the latest back
  // to the one holding the latest user turn (at most LATEST_TURNS_SCANNED_MAX rows), never
  // the whole transcript, whose size grows with the conversation. A page whose turn list
  // this reader cannot find is searched whole.
  function inlineCards(doc, latestUser) {
    const container = globalThis.OrcTurns.locateTurns(doc)?.container ?? null;
    if (container === null) return doc.querySelectorAll(SELECTORS.approvalCard);
    let cards = NO_CARDS;
    let rows = 0;
    for (let row = container.lastElementChild; row !== null && rows < LATEST_TURNS_SCANNED_MAX; row = row.previousElementSibling) {
      rows += 1;
      if (row.matches(SELECTORS.approvalCard)) cards = [...cards, row];
      if (row.querySelector(SELECTORS.approvalCard) !== null) cards = [...cards, ...row.querySelectorAll(SELECTORS.approvalCard)];
      if (latestUser !== null && row.contains(latestUser)) break;
    }
    return cards;
  }

  /**
   * The approval card waiting on the page, or null: `{app, title, buttons}` (`app`: the name
   * the title gives, or null when the title is in a language this reader does not know).
   * Located among the dialogs the page scan found (`dialogs`) and the latest rows of the turn
   * list, counted only after the latest user turn.
   */
  function approvalOf(doc, dialogs) {
    const latestUser = globalThis.OrcTurns.latestUserTurn(doc, LATEST_TURNS_SCANNED_MAX);
    const cards = inlineCards(doc, latestUser);
    if (cards.length === 0 && dialogs.length === 0) return null;
    const candidates = new Set(cards);
    for (const dialog of dialogs) candidates.add(dialog);
    for (const card of candidates) {
      if (!isVisible(card) || !isApprovalCard(card) || !isCurrent(card, latestUser)) continue;
      const title = titleOf(card);
      const app = title === null ? null : TEXTS.captureOf('approvalTitle', title)?.slice(0, APP_NAME_CHARS_MAX) ?? null;
      const buttons = [...card.querySelectorAll('button')].map(label).filter(Boolean)
        .slice(0, BUTTONS_MAX).map((text) => text.slice(0, BUTTON_LABEL_CHARS_MAX));
      return { app, title, buttons };
    }
    return null;
  }

  // Where the pill stands: inside the composer's editor, or beside a textarea in its form.
  function pillRoot(composer) {
    return composer.closest('form') ?? composer.parentElement ?? composer;
  }

  /** The pill of app `name` in the composer, or null (any app's when `name` is null). */
  function findPill(composer, name) {
    if (composer === null) return null;
    const wanted = name === null ? null : normalizeText(name).toLowerCase();
    for (const pill of pillRoot(composer).querySelectorAll(SELECTORS.pill)) {
      if (wanted === null || normalizeText(pill.getAttribute('data-keyword')).toLowerCase() === wanted) return pill;
    }
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
    approvalOf,
    findPill,
    draftText,
    mentionRows,
    appRow,
    isHighlighted,
  });
})();
