// ChatGPT's composer as the content adapter sees it: the editor, its send, stop, voice and
// dictation controls, the composer's dock (the form and what stands around it, where a banner
// or a card over the composer would show), and whether the composer holds anything a person
// put there (text, an app mention they chose, a file or an image, an upload in progress, a
// quoted reply). Structure first (test ids, the form's submit slot, marks, glyphs), words
// second (page-texts.js). Classic content script, loaded after page-texts.js, page-watch.js,
// turns.js and apps.js and before vocabulary.js and selectors.js into the same isolated world:
// it defines globalThis.OrcComposer and touches nothing on the page.
(() => {
  'use strict';

  const TEXTS = globalThis.OrcPageTexts;
  const APPS = globalThis.OrcApps;
  const WATCH = globalThis.OrcPageWatch;
  const { normalizeText, isWhitespace } = TEXTS;

  const SELECTORS = Object.freeze({
    // What must be present on any page the adapter types into.
    composer: [
      '#prompt-textarea',
      '[data-testid="prompt-textarea"]',
      'form[data-chatgpt-composer] [data-composer-markdown][contenteditable="true"]',
      '[contenteditable="true"][data-lexical-editor="true"]',
      '.ProseMirror[contenteditable="true"]',
      'form [contenteditable][role="textbox"]',
      // The app shell's editor, in a form or in a bare [data-composer-body] (October 2026).
      '[data-composer-markdown][contenteditable="true"]',
      'form textarea',
    ],
    // Looked for after typing: an empty composer's submit slot holds a voice button instead.
    // The app shell's Send has no test id: the form's submit button, or a button labelled Send.
    send: [
      'button[data-testid="send-button"]',
      'button[data-composer-submit]',
      'button#composer-submit-button',
      'button[data-testid="composer-submit-button"]',
      'form button[type="submit"]',
      'button[aria-label]',
    ],
    stop: [
      'button[data-testid="stop-button"]',
      'button[data-testid="composer-stop-button"]',
      'button[data-stop-generating]',
      'button#composer-submit-button',
      'button[data-composer-submit]',
      'button[aria-label]',
      'button:has(svg path[d^="M4.5 5.75C4.5 5.05964 5.05964 4.5 5.75 4.5H14.25"])',
    ],
    // The app shell's Stop glyph, a rounded square (its label is localized, it has no test id).
    stopGlyph: 'svg path[d^="M4.5 5.75C4.5 5.05964 5.05964 4.5 5.75 4.5H14.25"]',
    voice: '[data-testid^="composer-speech-button"], [data-testid*="voice"]',
    // Listed only so that a Retry control is never taken for Send.
    retry: 'button[data-testid="regenerate-thread-error-button"]',
    // The shell around a formless editor (October 2026: a bare [data-composer-body]).
    body: '[data-composer-body]',
    // Where the composer's dock stops: it is never the page's header, sidebar or main area,
    // nor an element holding the header, the sidebar or the main area.
    notDock: 'header, nav, aside, main',
    holdsPage: 'header, nav, main',
    // What a person adds to a draft besides text, outside the editor: a file being uploaded,
    // a picture (an image or a file's preview), a quoted passage of an earlier answer.
    upload: 'progress, [role="progressbar"], [aria-busy="true"]',
    picture: 'img, picture, video, canvas',
    quote: 'blockquote, [data-testid*="quote"]',
    // A person's file in the composer: a group named by the file's name (miuuyy/codex-chatgpt-web
    // browser-worker.ts@4822c5c, 2026-07-30; SOURCES.md section 8), however it is drawn inside.
    fileTile: '[role="group"][aria-label], [role="group"][aria-labelledby]',
  });

  // Joined once (a selector built on every read is garbage, and parsed again).
  const PICTURE_OR_UPLOAD = `${SELECTORS.picture}, ${SELECTORS.upload}`;

  const LIMITS = Object.freeze({
    // The dock is the form and at most this many of its ancestors (parent, grandparent).
    dockLevelsMax: 2,
    // A composer's form holds a few dozen elements; a walk past this many stops (and what
    // was not walked is not read as empty: the draft is then reported as an attachment).
    composerElementsWalkedMax: 400,
  });

  function isVisible(element) {
    return element.isConnected && (typeof element.checkVisibility !== 'function' || element.checkVisibility());
  }

  // The first element matching one of `selectorList` (in its order) that is visible and
  // accepted. The first match is usually the one: only past it are all matches listed.
  function firstVisible(root, selectorList, accept = null) {
    for (let s = 0; s < selectorList.length; s += 1) {
      const selector = selectorList[s];
      const first = root.querySelector(selector);
      if (first === null) continue;
      if (isVisible(first) && (accept === null || accept(first))) return first;
      const all = root.querySelectorAll(selector);
      for (let i = 1; i < all.length; i += 1) {
        if (isVisible(all[i]) && (accept === null || accept(all[i]))) return all[i];
      }
    }
    return null;
  }

  function label(element) {
    return normalizeText(element.getAttribute('aria-label') || element.getAttribute('title') || element.textContent || '');
  }

  function isEnabled(button) {
    return !button.disabled && button.getAttribute('aria-disabled') !== 'true';
  }

  function findComposer(doc) {
    const byId = doc.getElementById('prompt-textarea');
    if (byId !== null && isVisible(byId) && isTextInput(byId)) return byId;
    const { forms } = doc;
    for (let i = 0; i < forms.length; i += 1) {
      const found = firstVisible(forms[i], SELECTORS.composer, isTextInput);
      if (found !== null) return found;
    }
    return firstVisible(doc, SELECTORS.composer, isTextInput);
  }

  // A text field, editable now or not (a page may lock it for a moment; readinessToType
  // checks that it is editable before typing).
  function isTextInput(element) {
    return element.tagName === 'TEXTAREA' || element.hasAttribute('contenteditable');
  }

  // The controls next to the composer: its form, or the document when it has none.
  function controlsRoot(doc, composer) {
    return composer?.closest('form') ?? doc;
  }

  // The composer's own shell: its form, the bare body of a formless composer, else its parent.
  function shellOf(composer) {
    return composer.closest('form') ?? composer.closest(SELECTORS.body) ?? composer.parentElement ?? composer;
  }

  /** The composer's own text (what a person or the extension typed), without app pills, trimmed. */
  function composerText(composer) {
    const text = APPS.draftText(composer);
    return (text || '').trim();
  }

  function isComposerEditable(composer) {
    if (composer.tagName === 'TEXTAREA') return !composer.disabled && !composer.readOnly;
    return composer.isContentEditable ?? composer.getAttribute('contenteditable') === 'true';
  }

  // Stop: by its test id, its mark, its label in a language the adapter reads (not a dictation
  // or voice control's "Stop ..."), or the app shell's glyph. The submit slot keeps a send test
  // id while it shows Stop (Bloom++ notes), so such a test id does not rule a label out.
  function isStopControl(element) {
    const testId = element.getAttribute('data-testid') ?? '';
    if (/(?:^|-)stop(?:-|$)/.test(testId) || element.hasAttribute('data-stop-generating')) return true;
    if (testId !== '' && !/send|submit/.test(testId)) return false;
    const ariaLabel = element.getAttribute('aria-label') || '';
    return (TEXTS.matchesAny('stopLabel', ariaLabel) && !TEXTS.matchesAny('notStopLabel', ariaLabel))
      || element.querySelector(SELECTORS.stopGlyph) !== null;
  }

  // The voice-mode button that holds the submit slot of an empty composer: by test id where
  // it has one, else by its label (2026 pages: "Start Voice", no test id).
  function isVoiceControl(element) {
    return element.closest(SELECTORS.voice) !== null || TEXTS.matchesAny('voiceLabel', normalizeText(element.getAttribute('aria-label') ?? ''));
  }

  // Dictation (and reading aloud): a control whose label says so; it types nothing itself.
  function isDictationControl(element) {
    return TEXTS.matchesAny('notStopLabel', normalizeText(element.getAttribute('aria-label') ?? ''));
  }

  function isRetryControl(element) {
    return element.matches(SELECTORS.retry) || TEXTS.matchesAny('retryLabel', label(element));
  }

  // A send button is never the Stop, Retry or voice control. It is the submit slot (a send or
  // submit test id, its id or mark, a form's submit button) or a button labelled Send.
  function isSendControl(element) {
    if (isStopControl(element) || isRetryControl(element) || isVoiceControl(element)) return false;
    const testId = element.getAttribute('data-testid');
    if (testId !== null) return /send|submit/.test(testId);
    return element.id === 'composer-submit-button' || element.hasAttribute('data-composer-submit')
      || (element.getAttribute('type') === 'submit' && element.closest('form') !== null)
      || TEXTS.matchesAny('sendLabel', label(element));
  }

  function findSendButton(doc, composer = findComposer(doc)) {
    return firstVisible(controlsRoot(doc, composer), SELECTORS.send, isSendControl);
  }

  function findStopControl(doc, composer = findComposer(doc)) {
    const root = controlsRoot(doc, composer);
    return firstVisible(root, SELECTORS.stop, isStopControl)
      ?? (root === doc ? null : WATCH.queryDocument(doc, SELECTORS.stop[0]).find(isVisible) ?? null);
  }

  /**
   * The composer's dock: its shell (form) and up to LIMITS.dockLevelsMax ancestors around it,
   * as long as an ancestor is not and holds neither the turn list (`turnList`, null when the
   * page has none) nor the page's header, sidebar or main area. This is where a banner over
   * the composer or a card beside it stands; what lies further out (the header, the sidebar,
   * the thread) is not the composer's.
   */
  function dockOf(composer, turnList) {
    let dock = shellOf(composer);
    for (let level = 0; level < LIMITS.dockLevelsMax; level += 1) {
      const parent = dock.parentElement;
      if (parent === null || parent === composer.ownerDocument.body || parent.matches(SELECTORS.notDock)) break;
      if (turnList !== null && parent.contains(turnList)) break;
      if (parent.querySelector(SELECTORS.holdsPage) !== null) break;
      dock = parent;
    }
    return dock;
  }

  /**
   * What a person put in the composer, or null when it holds nothing of theirs: 'text' (text
   * other than `ownText`, what this extension typed), 'mention' (an app pill other than the
   * app `ownApp` this extension chooses), 'upload' (a file still uploading), 'image' (a
   * picture or a file's preview), 'quote' (a quoted reply), 'attachment' (anything else a
   * person added beside the editor: a file's name, a chip). Read in the composer's shell
   * (its form), outside the editor and its controls.
   */
  function draftOf(composer, { ownText = null, ownApp = null } = {}) {
    const text = composerText(composer);
    if (text !== '' && text.replace(/\s+/g, '') !== (ownText ?? '').replace(/\s+/g, '')) return 'text';
    if (APPS.othersPill(composer, ownApp) !== null) return 'mention';
    return addedBeside(composer);
  }

  // What stands in the composer's shell outside its editor and besides its controls: an
  // upload, a picture, a quote, or text (a file's name, a chip's words), else null. Kept until
  // anything in the shell changes (page-watch.js).
  function addedBeside(composer) {
    const shell = shellOf(composer);
    if (shell === composer) return null;
    const version = WATCH.subtreeVersion(shell);
    if (keptBeside.shell === shell && keptBeside.composer === composer && keptBeside.version === version) return keptBeside.added;
    const added = walkBeside(composer, shell);
    keptBeside = { shell, composer, version, added };
    return added;
  }

  // The last walk beside the editor, and what it was made on.
  let keptBeside = { shell: null, composer: null, version: -1, added: null };

  // A walk by the nodes' own links (no walker per read); controls and hidden parts are skipped.
  function walkBeside(composer, shell) {
    let walked = 0;
    let node = shell.firstChild;
    while (node !== null) {
      if (node.nodeType === 1) {
        walked += 1;
        if (walked > LIMITS.composerElementsWalkedMax) return 'attachment';
        const found = node === composer || isSkipped(node) ? null : addedElement(node);
        if (found !== null) return found;
        if (node !== composer && !isSkipped(node) && node.firstChild !== null && !isControl(node)) {
          node = node.firstChild;
          continue;
        }
      } else if (node.nodeType === 3 && !isBlank(node.data) && isVisible(node.parentElement)) {
        return 'attachment';
      }
      node = nextOutside(node, shell);
    }
    return null;
  }

  // An element of the shell that is by itself a person's addition. A file's tile says what
  // it holds: a file still uploading, an image, else a file.
  function addedElement(element) {
    if (element.matches(SELECTORS.upload)) return isVisible(element) ? 'upload' : null;
    if (element.matches(SELECTORS.quote)) return isVisible(element) ? 'quote' : null;
    if (element.matches(SELECTORS.picture)) return isVisible(element) ? 'image' : null;
    if (element.matches(SELECTORS.fileTile) && isVisible(element)) {
      if (element.querySelector(SELECTORS.upload) !== null) return 'upload';
      return element.querySelector(SELECTORS.picture) !== null ? 'image' : 'attachment';
    }
    return null;
  }

  // Parts of the shell never read as a draft here: hidden parts (for the eye or for everyone),
  // icons, the hidden file input and other text fields, and app pills (draftOf reads those).
  function isSkipped(element) {
    return element.hidden || element.getAttribute('aria-hidden') === 'true' || element.classList.contains('sr-only')
      || element.tagName === 'svg' || element.tagName === 'SCRIPT' || element.tagName === 'STYLE'
      || (element.tagName === 'INPUT' && (element.type === 'hidden' || element.type === 'file'))
      || element.tagName === 'TEXTAREA' || element.matches(APPS.SELECTORS.pill);
  }

  // A control's own words (a model picker's "5.2", a field's label) are no draft; a picture
  // or an upload inside one still is (a file tile is often a button).
  function isControl(element) {
    return (element.tagName === 'BUTTON' || element.tagName === 'LABEL' || element.getAttribute('role') === 'button')
      && element.querySelector(PICTURE_OR_UPLOAD) === null;
  }

  function isBlank(text) {
    for (let i = 0; i < text.length; i += 1) if (!isWhitespace(text.charCodeAt(i))) return false;
    return true;
  }

  // The node after `node` and its subtree in document order, within `root`, or null.
  function nextOutside(node, root) {
    let at = node;
    while (at !== root && at.nextSibling === null) at = at.parentNode;
    return at === root ? null : at.nextSibling;
  }

  /**
   * Whether `element`, a control in the composer's dock, is one of the composer's own: its
   * send, stop, voice or dictation control, a menu it opens (attach, tools, model), a tool it
   * toggles (`aria-pressed`: Search, Study), a control with a composer test id, or a control
   * that shows no words of its own (an icon: it asks nothing of a person and types nothing).
   */
  function isComposerControl(element) {
    const testId = element.getAttribute('data-testid') ?? '';
    if (/^composer-|model-switcher|speech|dictat|voice|send|stop|submit/.test(testId)) return true;
    if (element.hasAttribute('aria-haspopup') && element.getAttribute('aria-haspopup') !== 'false'
      && element.getAttribute('aria-haspopup') !== 'dialog') return true;
    if (element.hasAttribute('aria-pressed')) return true;
    if (isSendControl(element) || isStopControl(element) || isVoiceControl(element) || isDictationControl(element)) return true;
    return isWordless(element);
  }

  // A control with no visible words: only icons (svg), however it is labelled for a screen reader.
  function isWordless(element) {
    const text = element.textContent;
    return text === '' || isBlank(text);
  }

  globalThis.OrcComposer = Object.freeze({
    SELECTORS,
    LIMITS,
    isVisible,
    firstVisible,
    label,
    isEnabled,
    findComposer,
    controlsRoot,
    shellOf,
    composerText,
    isComposerEditable,
    isStopControl,
    isVoiceControl,
    isRetryControl,
    isSendControl,
    findSendButton,
    findStopControl,
    dockOf,
    draftOf,
    isComposerControl,
    isWordless,
  });
})();
