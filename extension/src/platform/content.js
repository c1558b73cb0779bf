// The content adapter, in every ChatGPT tab: it asks the background over a `page` port whether
// the tab is managed; in a managed tab it reports the page's facts when they change and
// performs `submit` and `reconcile` (extension/README.md, "Content script <-> background").
// Before the first send of each page load it chooses the developer app the way a person does
// (`@` and the app's name, the arrow keys to its row, Enter) and verifies its pill.
// An unmanaged tab stays inert: no observer, nothing touched. It clicks only a send button,
// once per submission, and never ChatGPT's Retry or Stop, nor a tool-approval card (no click,
// no key event), and it types nothing where the page holds something it cannot name
// (vocabulary.js: reported settling for a moment, then with its reason) or anything a person
// put in the composer. Classic content script; reads the page through globalThis.OrcSelectors
// (selectors.js) and globalThis.OrcApps (apps.js), types through globalThis.OrcTyping (typing.js).
(() => {
  'use strict';

  const PORT_NAME = 'page';
  const REPORT_DELAY_MS = 50;
  const RECONCILE_POLL_MS = 5_000;
  const PING_INTERVAL_MS = 20_000;
  const RECONNECT_DELAY_MS = 1_000;
  const UNANSWERED_CONNECTS_MAX = 5;
  const SEND_ENABLE_WAIT_MS = 5_000;
  const EVIDENCE_WAIT_MS = 15_000;
  // Choosing the app: the `@` popover must show the app's row, the keys move the highlight,
  // and the pill must show in the composer, each within its bound; at most this many rows
  // are stepped through with ArrowDown.
  const MENTION_WAIT_MS = 3_000;
  const HIGHLIGHT_WAIT_MS = 500;
  const PILL_WAIT_MS = 3_000;
  const MENTION_ROWS_MAX = 20;
  // The prompt just sent is the newest user turn, or close to it: evidence looks no further
  // back while polling (a reconcile after a restart looks at every turn).
  const EVIDENCE_USER_TURNS_MAX = 4;
  // A page that loads its conversation after the document shows no composer or turns for a
  // moment: it is reported as still loading until it stays unreadable this long.
  const UNREADABLE_GRACE_MS = 4_000;
  // Something in the latest turn or around the composer the adapter cannot name is reported
  // as settling (unknown without a reason: not published, not notified, still never typed
  // beside) until it has stayed this long: a control drawn for a moment while an answer
  // streams does not alarm anyone.
  const UNRECOGNIZED_SETTLE_MS = 1_500;
  const OBSERVED_ATTRIBUTES = ['disabled', 'aria-disabled', 'aria-label', 'data-testid', 'contenteditable', 'class', 'hidden'];

  const extension = globalThis.browser ?? globalThis.chrome;
  const page = globalThis.OrcSelectors;
  const apps = globalThis.OrcApps;
  const typing = globalThis.OrcTyping;
  if (!extension?.runtime?.connect || !page || !apps || !typing) return;
  const { pressKey, insertAtEnd, typeInto, sameText } = typing;
  // The background injects this script again into managed tabs after the extension was
  // reloaded (Chromium does not): run once per live extension instance.
  if (globalThis.__orcContentAdapter?.alive()) return;
  globalThis.__orcContentAdapter = { alive: extensionAlive };

  const adapter = {
    // 'connecting': no answer yet; 'managed' / 'unmanaged': the background's answer;
    // 'stopped': the extension context is gone (reloaded or removed) or it never answered.
    phase: 'connecting',
    port: null,
    unansweredConnects: 0,
    // The facts last sent (null: send the next ones whatever they say).
    lastFacts: null,
    observer: null,
    reportTimer: null,
    // When facts were last read, for the report window, and the turn-end signals read then.
    lastReportAtMs: 0,
    lastTurnEndSignals: null,
    reconcilePollTimer: null,
    pingTimer: null,
    reconnectTimer: null,
    submitting: false,
    // Set while computeFacts keeps failing, so an odd page is reported once, not on every change.
    readFailing: false,
    // Since when the page has lacked what the adapter needs (UNREADABLE_GRACE_MS), and the
    // timer that reports it once the grace is over.
    unreadableSinceMs: null,
    graceTimer: null,
    // Since when the page has shown something the adapter cannot name (UNRECOGNIZED_SETTLE_MS),
    // and the timer that reports it once settled.
    unrecognizedSinceMs: null,
    settleTimer: null,
    // The app this script chooses in the composer (the last submit's `app`): its pill is no
    // person's draft. Null until a submit names one.
    appName: null,
    // The text this script last typed into the composer: the only non-empty composer it may replace.
    ownComposerText: null,
    // The app's pill was verified in this document: the choice is not made again until the
    // page loads anew (a reload may lose it, and this script starts afresh with it).
    appChosen: false,
  };

  function warn(what, error) {
    console.warn(`[orchestrator] ${what}`, error ?? '');
  }

  function extensionAlive() {
    try {
      return Boolean(extension.runtime?.id);
    } catch {
      return false;
    }
  }

  // On a page the selectors cannot read, the facts say so (loaded: false) instead of throwing.
  // A page missing what the adapter needs (facts.missing) and showing no state of its own
  // reads as still loading until UNREADABLE_GRACE_MS passed: then it is reported as it is,
  // and the daemon fails closed. Something the adapter cannot name is reported as settling
  // until UNRECOGNIZED_SETTLE_MS passed.
  function readFacts() {
    let facts;
    try {
      facts = page.computeFacts(document, null, { ownApp: adapter.appName });
      adapter.readFailing = false;
    } catch (error) {
      if (!adapter.readFailing) warn('could not read the page', error);
      adapter.readFailing = true;
      return page.emptyFacts(location.href);
    }
    facts = settled(facts);
    const unreadable = facts.loaded && facts.missing.length > 0 && !page.showsOwnState(facts);
    if (!unreadable) {
      adapter.unreadableSinceMs = null;
      return facts;
    }
    adapter.unreadableSinceMs ??= Date.now();
    const waitedMs = Date.now() - adapter.unreadableSinceMs;
    if (waitedMs >= UNREADABLE_GRACE_MS) return facts;
    clearTimeout(adapter.graceTimer);
    adapter.graceTimer = setTimeout(report, UNREADABLE_GRACE_MS - waitedMs);
    return { ...facts, loaded: false };
  }

  // The facts with their unrecognized part marked settling until it has stayed
  // UNRECOGNIZED_SETTLE_MS (a report is due when it settles).
  function settled(facts) {
    if (facts.unrecognized === null) {
      adapter.unrecognizedSinceMs = null;
      return facts;
    }
    adapter.unrecognizedSinceMs ??= Date.now();
    const waitedMs = Date.now() - adapter.unrecognizedSinceMs;
    if (waitedMs >= UNRECOGNIZED_SETTLE_MS) return facts;
    clearTimeout(adapter.settleTimer);
    adapter.settleTimer = setTimeout(report, UNRECOGNIZED_SETTLE_MS - waitedMs);
    return { ...facts, unrecognized: { ...facts.unrecognized, settling: true } };
  }

  // ---- The port ----

  function connect() {
    if (adapter.port !== null || adapter.phase === 'stopped') return;
    if (!extensionAlive()) return stop('the extension was reloaded or removed');
    if (adapter.phase === 'connecting' && adapter.unansweredConnects >= UNANSWERED_CONNECTS_MAX) {
      return stop('the background never answered');
    }
    if (adapter.phase === 'connecting') adapter.unansweredConnects += 1;
    let port;
    try {
      port = extension.runtime.connect({ name: PORT_NAME });
    } catch (error) {
      warn('could not connect to the background', error);
      return scheduleReconnect();
    }
    adapter.port = port;
    port.onMessage.addListener(onMessage);
    port.onDisconnect.addListener(() => onDisconnect(port));
    const facts = readFacts();
    adapter.lastFacts = facts;
    post({ type: 'page.hello', url: facts.url, facts });
  }

  function onDisconnect(port) {
    if (adapter.port !== port) return;
    adapter.port = null;
    void extension.runtime.lastError; // read, so Chromium does not log it as unchecked
    if (!extensionAlive()) return stop('the extension was reloaded or removed');
    if (adapter.phase !== 'unmanaged') scheduleReconnect();
  }

  // At most one attempt per RECONNECT_DELAY_MS; a managed tab also retries from every report.
  function scheduleReconnect() {
    if (adapter.reconnectTimer !== null || adapter.phase === 'stopped' || adapter.phase === 'unmanaged') return;
    adapter.reconnectTimer = setTimeout(() => {
      adapter.reconnectTimer = null;
      connect();
    }, RECONNECT_DELAY_MS);
  }

  function post(message) {
    if (adapter.port === null) return false;
    try {
      adapter.port.postMessage(message);
      return true;
    } catch (error) {
      warn('the port to the background broke', error);
      adapter.port = null;
      scheduleReconnect();
      return false;
    }
  }

  function stop(reason) {
    warn(`stopped: ${reason}`);
    adapter.phase = 'stopped';
    stopObserving();
    clearTimeout(adapter.reconnectTimer);
    adapter.reconnectTimer = null;
    try {
      adapter.port?.disconnect();
    } catch {
      // The port is already gone.
    }
    adapter.port = null;
  }

  function onMessage(message) {
    try {
      switch (message?.type) {
        case 'page.managed':
          adapter.phase = 'managed';
          adapter.unansweredConnects = 0;
          startObserving();
          scheduleReport();
          break;
        case 'page.inspect':
          adapter.lastFacts = null;
          report();
          break;
        case 'page.unmanaged':
          adapter.phase = 'unmanaged';
          adapter.unansweredConnects = 0;
          stopObserving();
          break;
        case 'submit':
          void answerSubmit(message);
          break;
        case 'reconcile':
          post({ type: 'reconcile.result', requestId: message.requestId, found: page.countUserTurnsContaining(document, String(message.nonce)) > 0 });
          break;
        default:
          break;
      }
    } catch (error) {
      warn(`could not handle ${message?.type}`, error);
    }
  }

  // ---- Observation (managed tabs only) ----

  function startObserving() {
    if (adapter.observer !== null) return;
    adapter.observer = new MutationObserver(scheduleReport);
    adapter.observer.observe(document.documentElement, {
      subtree: true, childList: true, characterData: true, attributes: true, attributeFilter: OBSERVED_ATTRIBUTES,
    });
    adapter.reconcilePollTimer = setInterval(report, RECONCILE_POLL_MS);
    adapter.pingTimer = setInterval(() => post({ type: 'page.ping' }), PING_INTERVAL_MS);
    addEventListener('popstate', scheduleReport);
    addEventListener('load', scheduleReport);
  }

  function stopObserving() {
    adapter.observer?.disconnect();
    adapter.observer = null;
    clearInterval(adapter.reconcilePollTimer);
    clearInterval(adapter.pingTimer);
    clearTimeout(adapter.reportTimer);
    clearTimeout(adapter.graceTimer);
    clearTimeout(adapter.settleTimer);
    adapter.reconcilePollTimer = adapter.pingTimer = adapter.reportTimer = adapter.graceTimer = adapter.settleTimer = null;
    removeEventListener('popstate', scheduleReport);
    removeEventListener('load', scheduleReport);
  }

  // Reports a change at once when the last report is REPORT_DELAY_MS old, else coalesces it
  // into one report when that window ends (a fixed window, not a sliding one: a page that
  // streams for minutes still reports). A turn that starts or ends (page.turnEndSignals) is
  // reported at once, and no change waits for a timer whose window has passed: background
  // tabs stretch every timer to a second or more, and a turn's end often lands within the
  // window of its last streamed words.
  function scheduleReport() {
    const sinceLastMs = Date.now() - adapter.lastReportAtMs;
    if (sinceLastMs >= REPORT_DELAY_MS || page.turnEndSignals(document) !== adapter.lastTurnEndSignals) return report();
    if (adapter.reportTimer === null) adapter.reportTimer = setTimeout(report, REPORT_DELAY_MS - sinceLastMs);
  }

  function report() {
    clearTimeout(adapter.reportTimer);
    adapter.reportTimer = null;
    adapter.lastReportAtMs = Date.now();
    if (adapter.phase !== 'managed') return;
    if (adapter.port === null) return scheduleReconnect();
    const facts = readFacts();
    adapter.lastTurnEndSignals = page.turnEndSignals(document);
    if (!sameFacts(facts, adapter.lastFacts) && post({ type: 'page.facts', url: facts.url, facts })) adapter.lastFacts = facts;
  }

  // Whether two facts (plain data: booleans, numbers, strings, null, arrays and objects of
  // them) say the same. Compared in place: a JSON text of the facts on every report would be
  // garbage as large as the facts themselves.
  function sameFacts(a, b) {
    if (a === b) return true;
    if (a === null || b === null || typeof a !== 'object' || typeof b !== 'object' || Array.isArray(a) !== Array.isArray(b)) return false;
    if (Array.isArray(a)) {
      if (a.length !== b.length) return false;
      for (let i = 0; i < a.length; i += 1) if (!sameFacts(a[i], b[i])) return false;
      return true;
    }
    let keys = 0;
    for (const key in a) {
      if (!Object.hasOwn(a, key)) continue;
      keys += 1;
      if (!Object.hasOwn(b, key) || !sameFacts(a[key], b[key])) return false;
    }
    for (const key in b) if (Object.hasOwn(b, key)) keys -= 1;
    return keys === 0;
  }

  // ---- Submission ----

  class SubmitRefusal extends Error {
    constructor(code, detail) {
      super(detail);
      this.code = code;
    }
  }

  async function answerSubmit(command) {
    const progress = { touched: false };
    let outcome;
    try {
      outcome = await submit(command, progress);
    } catch (error) {
      if (error instanceof SubmitRefusal) {
        outcome = { status: 'failed', code: error.code, detail: error.message };
      } else {
        warn('submission failed unexpectedly', error);
        const code = progress.touched ? 'AMBIGUOUS_SUBMISSION' : 'HOST_UI_CHANGED';
        outcome = { status: 'failed', code, detail: `adapter error: ${error?.message ?? error}` };
      }
    }
    post({ type: 'submit.result', requestId: command.requestId, ...outcome, touched: progress.touched });
  }

  async function submit(command, progress) {
    const { text, nonce, mode } = command;
    if (adapter.phase !== 'managed') throw new SubmitRefusal('CONVERSATION_CLOSED', 'this tab is not managed');
    if (typeof text !== 'string' || typeof nonce !== 'string' || nonce === '' || !text.includes(nonce) || !['idle', 'steer'].includes(mode)) {
      throw new SubmitRefusal('INVALID_COMMAND', 'submit needs a text that contains its nonce and a mode of idle or steer');
    }
    const app = command.app ?? null;
    if (app !== null && (typeof app.name !== 'string' || app.name.trim() === '' || typeof (app.description ?? '') !== 'string')) {
      throw new SubmitRefusal('INVALID_COMMAND', 'submit: app needs a name (and a description string, possibly empty)');
    }
    if (adapter.submitting) throw new SubmitRefusal('COMPOSER_BUSY', 'another submission is in progress in this tab');
    adapter.submitting = true;
    adapter.appName = app?.name ?? null;
    try {
      return await submitOnce(text, nonce, mode, app, progress);
    } finally {
      adapter.submitting = false;
    }
  }

  async function submitOnce(text, nonce, mode, app, progress) {
    if (page.countUserTurnsContaining(document, nonce) > 0) {
      return { status: 'submitted', detail: 'a user turn with this nonce is already on the page' };
    }
    let ready = page.readinessToType(document, mode, adapter.ownComposerText, adapter.appName);
    if (!ready.ok) throw new SubmitRefusal(ready.code, ready.detail);
    if (app !== null && !adapter.appChosen) {
      await chooseApp(ready.composer, app);
      // Choosing replaced the editor's subtree: read the composer again.
      ready = page.readinessToType(document, mode, adapter.ownComposerText, adapter.appName);
      if (!ready.ok) throw new SubmitRefusal(ready.code, ready.detail);
    }
    const { composer } = ready;
    progress.touched = true;
    if (!typeInto(composer, text)) {
      untouchIfCleared(composer, progress);
      throw new SubmitRefusal('HOST_UI_CHANGED', 'the composer did not take the prompt');
    }
    adapter.ownComposerText = text;
    // The page draws its send button once the composer holds text (an empty composer's slot
    // holds a voice button): wait a bounded time for it to appear and enable.
    const send = await waitFor(() => usableSendButton(mode), SEND_ENABLE_WAIT_MS);
    if (send === null) {
      untouchIfCleared(composer, progress);
      const seen = page.findSendButton(document) === null ? 'no send button appeared' : 'the send button stayed disabled';
      throw new SubmitRefusal('HOST_UI_CHANGED', `${seen} within ${SEND_ENABLE_WAIT_MS} ms of typing (a hidden tab may not enable it)`);
    }
    const current = page.findComposer(document);
    if (current === null || !sameText(page.composerText(current), text)) {
      throw new SubmitRefusal('COMPOSER_BUSY', 'the composer changed while the prompt was being typed; nothing was sent');
    }
    send.click();
    const accepted = await waitFor(() => page.countUserTurnsContaining(document, nonce, EVIDENCE_USER_TURNS_MAX) > 0, EVIDENCE_WAIT_MS);
    if (!accepted) {
      throw new SubmitRefusal('AMBIGUOUS_SUBMISSION', `send was clicked but no user turn with the nonce appeared within ${EVIDENCE_WAIT_MS} ms`);
    }
    return { status: 'submitted' };
  }

  // ---- Choosing the app ----

  /**
   * Chooses `app` in the composer as a person does and verifies its pill; nothing is sent.
   * A pill already there is kept. Fails with APP_NOT_SELECTED (definite: no send control was
   * touched, and what was typed is cleared again) when the popover shows no single row with
   * the app's name and description, or the pill does not show within PILL_WAIT_MS.
   */
  async function chooseApp(composer, app) {
    if (apps.findPill(composer, app.name) !== null) {
      adapter.appChosen = true;
      return;
    }
    const mention = `@${app.name}`;
    if (!insertAtEnd(composer, mention)) return giveUpChoosing(app, `the composer did not take ${mention}`);
    adapter.ownComposerText = mention;
    const row = await waitFor(() => apps.appRow(document, app), MENTION_WAIT_MS);
    if (row === null) return giveUpChoosing(app, `no single row for ${app.name}${app.description ? ` (${app.description})` : ''} in the @ popover within ${MENTION_WAIT_MS} ms`);
    for (let step = 0; !apps.isHighlighted(row); step += 1) {
      if (step >= MENTION_ROWS_MAX || !row.isConnected) return giveUpChoosing(app, `the row of ${app.name} could not be highlighted`);
      pressKey(page.findComposer(document) ?? composer, 'ArrowDown');
      await waitFor(() => apps.isHighlighted(row) || !row.isConnected, HIGHLIGHT_WAIT_MS);
    }
    // Enter only while the app's row is the highlighted one: Enter elsewhere would send.
    if (apps.appRow(document, app) !== row || !apps.isHighlighted(row)) return giveUpChoosing(app, 'the popover changed before the row was chosen');
    pressKey(page.findComposer(document) ?? composer, 'Enter');
    const pill = await waitFor(() => apps.findPill(page.findComposer(document), app.name), PILL_WAIT_MS);
    if (pill === null) return giveUpChoosing(app, `the pill of ${app.name} did not show in the composer within ${PILL_WAIT_MS} ms`);
    adapter.appChosen = true;
    const current = page.findComposer(document);
    // The mention text became the pill; anything of it left over is this script's to clear.
    if (current !== null && page.composerText(current) === '') adapter.ownComposerText = null;
  }

  // The failure's detail is the app's name (docs/protocol/executor.md, APP_NOT_SELECTED: the
  // daemon quotes it to the person); why is logged here.
  function giveUpChoosing(app, why) {
    warn(`could not choose the app ${app.name}: ${why}; nothing was sent`);
    const composer = page.findComposer(document);
    if (composer !== null && adapter.ownComposerText !== null) clearOwnText(composer);
    pressKey(page.findComposer(document) ?? document.body, 'Escape');
    throw new SubmitRefusal('APP_NOT_SELECTED', app.name);
  }

  // Nothing was clicked yet: once the composer holds no trace of the prompt, the failure is
  // definite (nothing can have been sent), not ambiguous.
  function untouchIfCleared(composer, progress) {
    if (clearOwnText(composer)) progress.touched = false;
  }

  function usableSendButton(mode) {
    const button = page.findSendButton(document);
    if (button === null || !page.isEnabled(button)) return null;
    if (mode === 'idle' && page.findStopControl(document) !== null) return null;
    return button;
  }

  // Empties the composer if it still holds only what this script typed (never a person's
  // text); true when the composer is empty afterwards.
  function clearOwnText(composer) {
    try {
      if (!typing.clearText(composer, adapter.ownComposerText)) return false;
      adapter.ownComposerText = null;
      return true;
    } catch (error) {
      warn('could not clear the composer', error);
      return false;
    }
  }

  // Resolves with check()'s first truthy value, or null after timeoutMs (typing.js waitFor).
  function waitFor(check, timeoutMs) {
    return typing.waitFor(check, timeoutMs, (error) => warn('a wait check failed', error));
  }

  connect();
})();
