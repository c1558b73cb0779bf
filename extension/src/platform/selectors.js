// ChatGPT's page as the content adapter sees it: every selector and text the extension relies
// on (most specific first, then fallbacks), and the read-only functions that turn a document
// into the `facts` object of extension/README.md. Classic content script, loaded before
// content.js into the same isolated world: it defines globalThis.OrcSelectors and touches
// nothing on the page.
(() => {
  'use strict';

  const SELECTORS = Object.freeze({
    composer: [
      '#prompt-textarea',
      '.ProseMirror[contenteditable="true"]',
      '[contenteditable="true"][role="textbox"]',
      'textarea#prompt-textarea',
    ],
    // #composer-submit-button is the slot that turns into Stop while generating.
    send: [
      'button[data-testid="send-button"]',
      'button#composer-submit-button',
      'button[aria-label="Send prompt"]',
      'button[aria-label="Send message"]',
    ],
    stop: [
      'button[data-testid="stop-button"]',
      'button#composer-submit-button[aria-label*="stop" i]',
      'button[aria-label="Stop generating"]',
      'button[aria-label="Stop streaming"]',
      'button[aria-label="Stop answering"]',
    ],
    // What occupies the send slot when the composer is empty on some page versions.
    sendSlot: ['#composer-submit-button', 'button[data-testid="composer-speech-button"]'],
    turn: ['article[data-testid^="conversation-turn-"]', '[data-turn]', '[data-message-author-role]'],
    authorRole: '[data-message-author-role]',
    assistantText: 'div.markdown',
    actionBar: ['[data-testid="copy-turn-action-button"]', 'button[aria-label="Copy response"]'],
    // Any non-empty text inside these is an error card.
    errorCard: ['[class*="text-token-text-error"]'],
    // Live regions and test ids that are error cards only when their text says so.
    errorRegion: ['[role="alert"]', '[aria-live="assertive"]', '[data-testid*="error"]:not(button)'],
    // Listed only so the adapter can recognise, and refuse to click, ChatGPT's Retry control.
    retry: 'button[data-testid="regenerate-thread-error-button"]',
    login: ['button[data-testid*="login"]', 'a[data-testid*="login"]'],
    challenge: ['#challenge-form', 'iframe[src*="challenges.cloudflare.com"]'],
    // Text people or the model wrote (messages, the draft, chat titles in the sidebar): never
    // read as page state, so a reply that says "something went wrong" is not an error.
    authoredText: '.markdown, [data-message-author-role="user"], #prompt-textarea, [contenteditable="true"], nav, aside',
  });

  const TEXTS = Object.freeze({
    deliveryTimeout: /message delivery timed out/i,
    somethingWentWrong: /something went wrong/i,
    // Notices that mean the latest turn failed, even outside a recognised error card.
    turnFailed: [
      /^message delivery timed out/i,
      /^something went wrong/i,
      /^there was an error generating a response/i,
      /^stream cache expired/i,
      /^resume stream unavailable/i,
      /^connection interrupted/i,
    ],
    // Words that make a live region an error card.
    errorWords: /error|failed|went wrong|timed out|interrupted|expired|unavailable/i,
    conversationFull: /you've reached the maximum length for this conversation/i,
    challengeTitle: /^just a moment\.\.\.$/i,
    challenge: [/^just a moment\.\.\./i, /verify you are human/i],
    usageLimit: [
      /you've (?:reached|hit) (?:your|the|our) [\w\s-]{0,40}?\b(?:limit|cap)\b/i,
      /\b(?:usage|message) (?:limit|cap) (?:reached|exceeded)\b/i,
    ],
    retryLabel: /^(?:retry|try again|regenerate)$/i,
    stopLabel: /\bstop\b/i,
  });

  // noticeCharsMax: page state is said in short notices; longer text is content, not state.
  const LIMITS = Object.freeze({ assistantTailCharsMax: 2048, errorTextCharsMax: 200, noticeCharsMax: 300 });

  function isVisible(element) {
    return element.isConnected && (typeof element.checkVisibility !== 'function' || element.checkVisibility());
  }

  function firstVisible(root, selectorList, accept = () => true) {
    for (const selector of selectorList) {
      for (const element of root.querySelectorAll(selector)) {
        if (isVisible(element) && accept(element)) return element;
      }
    }
    return null;
  }

  function label(element) {
    return (element.getAttribute('aria-label') || element.textContent || '').trim();
  }

  // Curly apostrophes and runs of whitespace differ between page versions.
  function normalizeText(text) {
    return String(text).replace(/[\u2018\u2019]/g, "'").replace(/\s+/g, ' ').trim();
  }

  function isStopControl(element) {
    return element.getAttribute('data-testid') === 'stop-button' || TEXTS.stopLabel.test(element.getAttribute('aria-label') || '');
  }

  function isRetryControl(element) {
    return element.matches(SELECTORS.retry) || TEXTS.retryLabel.test(label(element));
  }

  function isEnabled(button) {
    return !button.disabled && button.getAttribute('aria-disabled') !== 'true';
  }

  function findComposer(doc) {
    return firstVisible(doc, SELECTORS.composer);
  }

  function composerText(composer) {
    const text = composer.tagName === 'TEXTAREA' ? composer.value : composer.textContent;
    return (text || '').trim();
  }

  function isComposerEditable(composer) {
    if (composer.tagName === 'TEXTAREA') return !composer.disabled && !composer.readOnly;
    return composer.isContentEditable ?? composer.getAttribute('contenteditable') === 'true';
  }

  // A send button is never the Stop or Retry control, nor a slot button with another test id
  // (the voice-mode button sits in the same slot on some page versions).
  function findSendButton(doc) {
    return firstVisible(doc, SELECTORS.send, (button) => {
      const testId = button.getAttribute('data-testid');
      return !isStopControl(button) && !isRetryControl(button) && (testId === null || testId.includes('send'));
    });
  }

  function findStopControl(doc) {
    return firstVisible(doc, SELECTORS.stop, isStopControl);
  }

  function findSendSlot(doc) {
    return findSendButton(doc) ?? findStopControl(doc) ?? firstVisible(doc, SELECTORS.sendSlot);
  }

  function turnRole(element) {
    const role = element.getAttribute('data-turn') ?? element.getAttribute('data-message-author-role')
      ?? element.querySelector(SELECTORS.authorRole)?.getAttribute('data-message-author-role');
    return role === 'user' || role === 'assistant' ? role : null;
  }

  // The conversation's user and assistant turns in page order, from the first selector that
  // finds any (outermost matches only: an article also holds [data-message-author-role]).
  function listTurns(doc) {
    for (const selector of SELECTORS.turn) {
      const elements = [...doc.querySelectorAll(selector)].filter((element) => !element.parentElement?.closest(selector));
      if (elements.length > 0) {
        return elements.map((element) => ({ element, role: turnRole(element) })).filter((turn) => turn.role !== null);
      }
    }
    return [];
  }

  function countUserTurnsContaining(doc, needle) {
    const wanted = normalizeText(needle);
    return listTurns(doc).filter((turn) => turn.role === 'user' && normalizeText(turn.element.textContent).includes(wanted)).length;
  }

  function hasActionBar(turnElement) {
    return SELECTORS.actionBar.some((selector) => turnElement.querySelector(selector) !== null);
  }

  function assistantTail(turnElement) {
    const blocks = [...turnElement.querySelectorAll(SELECTORS.assistantText)];
    const sources = blocks.length > 0 ? blocks : [turnElement.querySelector(SELECTORS.authorRole) ?? turnElement];
    const text = sources.map((element) => element.innerText ?? element.textContent ?? '').join('\n').trim();
    return text.slice(-LIMITS.assistantTailCharsMax);
  }

  // The short texts the page itself shows (error cards, banners, log-in and challenge pages):
  // the text of each element that directly holds visible text outside authored text, buttons,
  // scripts and hidden subtrees, when it is at most LIMITS.noticeCharsMax long.
  function notices(root) {
    if (root.matches(SELECTORS.authoredText)) return [];
    const skip = (element) => element.hidden || /^(?:SCRIPT|STYLE|NOSCRIPT|TEMPLATE|TEXTAREA|BUTTON)$/.test(element.tagName)
      || element.matches(SELECTORS.authoredText);
    const walker = root.ownerDocument.createTreeWalker(root, 0x5 /* SHOW_ELEMENT | SHOW_TEXT */, {
      acceptNode: (node) => (node.nodeType === 1 && skip(node) ? 2 /* FILTER_REJECT */ : 1 /* FILTER_ACCEPT */),
    });
    const holders = new Set();
    for (let node = walker.nextNode(); node !== null; node = walker.nextNode()) {
      if (node.nodeType === 3 && node.data.trim() !== '') holders.add(node.parentElement);
    }
    return [...holders].map((element) => normalizeText(element.textContent)).filter((text) => text.length <= LIMITS.noticeCharsMax);
  }

  function cardText(element) {
    const copy = element.cloneNode(true);
    for (const button of copy.querySelectorAll('button')) button.remove();
    return normalizeText(copy.textContent);
  }

  function errorKind(text) {
    if (TEXTS.deliveryTimeout.test(text)) return 'delivery_timeout';
    if (TEXTS.somethingWentWrong.test(text)) return 'something_went_wrong';
    return 'generic';
  }

  function describeError(text) {
    return { kind: errorKind(text), text: text.slice(0, LIMITS.errorTextCharsMax) };
  }

  // An error card in the given (latest) turn; "conversation full" is reported on its own.
  function turnError(turnElement) {
    const inMessageBody = (element) => element.closest('.markdown') !== null;
    const isReportable = (text) => text !== '' && !TEXTS.conversationFull.test(text);
    for (const selector of SELECTORS.errorCard) {
      for (const card of turnElement.querySelectorAll(selector)) {
        const text = cardText(card);
        if (!inMessageBody(card) && isReportable(text)) return describeError(text);
      }
    }
    for (const selector of SELECTORS.errorRegion) {
      for (const region of turnElement.querySelectorAll(selector)) {
        const text = cardText(region);
        if (!inMessageBody(region) && isReportable(text) && TEXTS.errorWords.test(text)) return describeError(text);
      }
    }
    const failure = notices(turnElement).find((text) => TEXTS.turnFailed.some((pattern) => pattern.test(text)));
    return failure === undefined ? null : describeError(failure);
  }

  function emptyFacts(url) {
    return {
      url,
      loaded: false,
      composer: false,
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
      usageLimit: false,
    };
  }

  function isConversationFull(doc) {
    return doc.body !== null && notices(doc.body).some((text) => TEXTS.conversationFull.test(text));
  }

  // Whether a stop control shows and whether the last assistant turn shows its action bar, as
  // one string: what tells a generating page from an idle one, cheap enough to read on every
  // mutation (computeFacts also walks the page's notices).
  function turnEndSignals(doc) {
    const lastAssistant = findLastAssistantTurn(doc);
    return `stop:${findStopControl(doc) !== null} done:${lastAssistant !== null && hasActionBar(lastAssistant)}`;
  }

  // The last assistant turn's element, as listTurns would find it, but walking back from the
  // end of the page: a long conversation costs one native query, not a pass over every turn.
  function findLastAssistantTurn(doc) {
    for (const selector of SELECTORS.turn) {
      const elements = doc.querySelectorAll(selector);
      if (elements.length === 0) continue;
      for (let i = elements.length - 1; i >= 0; i -= 1) {
        const element = elements[i];
        if (!element.parentElement?.closest(selector) && turnRole(element) === 'assistant') return element;
      }
      return null;
    }
    return null;
  }

  // The facts of extension/README.md. The assistant tail is reported only once the latest
  // assistant turn is done (its action bar shows): a streaming tail is not state, and
  // reporting it would turn every rendered token into a message.
  function computeFacts(doc) {
    const facts = emptyFacts(String(doc.location?.href ?? ''));
    if (doc.body === null) return facts;
    const composer = findComposer(doc);
    const send = findSendButton(doc);
    const turns = listTurns(doc);
    const lastAssistant = turns.findLast((turn) => turn.role === 'assistant') ?? null;
    const latest = turns.at(-1) ?? null;
    const pageNotices = notices(doc.body);
    const shown = (pattern) => pageNotices.some((text) => pattern.test(text));
    facts.loaded = doc.readyState === 'complete';
    facts.composer = composer !== null;
    facts.composerText = composer !== null && composerText(composer) !== '';
    facts.sendButton = send !== null;
    facts.sendEnabled = send !== null && isEnabled(send);
    facts.stopButton = findStopControl(doc) !== null;
    facts.userTurns = turns.filter((turn) => turn.role === 'user').length;
    facts.assistantTurns = turns.length - facts.userTurns;
    facts.latestIsAssistant = latest !== null && latest.role === 'assistant';
    facts.lastAssistantDone = lastAssistant !== null && hasActionBar(lastAssistant.element);
    facts.lastAssistantTail = facts.lastAssistantDone ? assistantTail(lastAssistant.element) : '';
    facts.error = latest === null ? null : turnError(latest.element);
    facts.conversationFull = shown(TEXTS.conversationFull);
    facts.loginRequired = firstVisible(doc, SELECTORS.login) !== null;
    facts.challenge = SELECTORS.challenge.some((selector) => doc.querySelector(selector) !== null)
      || TEXTS.challengeTitle.test(doc.title.trim()) || TEXTS.challenge.some(shown);
    facts.usageLimit = TEXTS.usageLimit.some(shown);
    return facts;
  }

  globalThis.OrcSelectors = Object.freeze({
    SELECTORS,
    TEXTS,
    LIMITS,
    isEnabled,
    findComposer,
    composerText,
    isComposerEditable,
    findSendButton,
    findStopControl,
    findSendSlot,
    countUserTurnsContaining,
    isConversationFull,
    emptyFacts,
    computeFacts,
    turnEndSignals,
  });
})();
