// The executor state machine, sans IO: every input is a method call carrying the current
// time, and every output is an effect returned as data for the background to perform, in
// order (a `persist` must be durable before the effects after it run).
//
// Inputs (each returns an array of effects):
//   start(now, openTabs)                 once, after loading storage; openTabs: [{tabId, url}]
//   wake(now)                            the background woke (alarm): reconnect now if down
//   tick(now)                            a timer fired (see the `setTimer` effect)
//   settingsChanged(now, settings)
//   socketOpened(now, connectionId) / socketMessage(now, connectionId, text) / socketClosed(now, connectionId, detail)
//   probeAnswered(now, probeId, answer)  answer: {status, body} | {error} (daemon-link.js probed)
//   pageMessage(now, tabId, message)     anything a content script sent on the `page` port
//   pageDisconnected(now, tabId)         its port dropped
//   tabOpened(now, requestId, tabId) / tabOpenFailed(now, requestId, detail)
//   tabUpdated(now, tabId, url) / tabClosed(now, tabId)
//   uiAction(now, replyId, request) / uiQuery(now, replyId, request)
// Queries (no effects): uiState(), watchdogSight(), settings.
//
// Effects:
//   {kind:'persist', key:'journal'|'bindings', value}
//   {kind:'openSocket', connectionId, url} / {kind:'closeSocket', connectionId, reason}
//   {kind:'probe', probeId, url}         GET url (a socket did not open: a standby?); answer with probeAnswered
//   {kind:'send', connectionId, message, text}   text is the canonical encoding of message
//   {kind:'toPage', tabId, message}      over the tab's `page` port
//   {kind:'openTab', requestId, workerId, url}   answer with tabOpened / tabOpenFailed
//   {kind:'overlay', tabId, workerSummary, connection, pageUnknown}   workerSummary null hides it;
//                                        pageUnknown: why the page is not recognized, or null
//   {kind:'uiChanged'}                   broadcast `ui.changed`
//   {kind:'uiReply', replyId, response}  the answer to uiAction / uiQuery
//   {kind:'log', level, message}
//   {kind:'setTimer', atMs}              always last: call tick(atMs) then (null: no timer)
//
// This file is the shell around the commands: the daemon connection, the pages and tabs,
// and the publication of each binding's state. A journaled command's life (queue, tab,
// submission, reconciliation, the new chat's URL) is in commands.js; the operator channel
// (actions, queries, the tab a person's Start a run here claims) in operator-channel.js; the
// page table (what each tab's content script reported, and the surfaces' lists) in pages.js.
//
// Bad input (a malformed frame, a page message that does not fit) is logged and ignored;
// no input throws.

import { nextObservation } from './coalesce.js';
import { createBindings, wireBinding } from './bindings.js';
import { Commands } from './commands.js';
import { createJournal } from './journal.js';
import { DaemonLink } from './daemon-link.js';
import { decodeDaemonMessage, encodeMessage, PROTOCOL_ERROR_CLOSES, PROTOCOL_VERSION, WireError } from './protocol.js';
import { pageInspect, pageManaged, pageUnmanaged, readPageMessage } from './page-messages.js';
import { sameConversation } from './urls.js';
import { classificationOf, Pages } from './pages.js';
import { OperatorChannel } from './operator-channel.js';

export { OPERATOR_REPLY_TIMEOUT_MS } from './operator-channel.js';

/** protocol.error codes after which reconnecting waits the longest backoff (no fast loop). */
const HOLD_AT_CAP_CODES = new Set(['UNAUTHORIZED', 'REPLACED', 'SUPERSEDED', 'INVALID_EXECUTOR_ID', 'UNSUPPORTED_VERSION']);

export class Executor {
  #settings;
  #journal;
  #bindings;
  #commands;
  /** The pages the content scripts report (pages.js). */
  #pages = new Pages();
  /** workers whose binding waits for its page to confirm it (then a `binding` is sent) */
  #unverified = new Set();
  #link;
  #status = { status: 'offline' };
  #summary = null;
  #operator;
  #now = 0;
  #effects = [];

  /**
   * `settings`: the extension settings; `journal`, `bindings`: what storage holds;
   * `random`: a function returning a number in [0, 1) (reconnect jitter).
   */
  constructor({ settings, journal = [], bindings = [], random }) {
    this.#settings = settings;
    this.#link = new DaemonLink(random);
    this.#journal = createJournal(journal);
    this.#bindings = createBindings(bindings);
    const executor = this;
    this.#commands = new Commands({
      journal: this.#journal,
      bindings: this.#bindings,
      pages: this.#pages,
      unverified: this.#unverified,
      get now() { return executor.#now; },
      get settings() { return executor.#settings; },
      emit: (effect) => this.#emit(effect),
      log: (level, message) => this.#log(level, message),
      send: (message) => this.#send(message),
      persistJournal: () => this.#persistJournal(),
      persistBindings: () => this.#persistBindings(),
      toPage: (tabId, message) => this.#toPage(tabId, message),
      unmanage: (binding) => this.#unmanage(binding),
      classificationOf,
      observe: (binding, page) => this.#observe(binding, page),
      publish: (binding, observation) => this.#publish(binding, observation),
      pageReport: (tabId, report) => this.#onPageReport(tabId, report),
    });
    this.#operator = new OperatorChannel({
      get now() { return executor.#now; },
      get live() { return executor.#link.live; },
      get connectionId() { return executor.#link.connectionId; },
      send: (message) => this.#send(message),
      reply: (replyId, response) => this.#emit({ kind: 'uiReply', replyId, response }),
      log: (level, message) => this.#log(level, message),
      tabOf: (tabId) => ({ page: this.#pages.get(tabId), managedBy: this.#bindings.byTab(tabId)?.workerId ?? null }),
      bindTab: (claim, workerId) => this.#bindClaimedTab(claim, workerId),
      command: (command) => this.#onCommand(command),
    });
  }

  get settings() {
    return this.#settings;
  }

  /**
   * What `ui.state` answers: the connection, the daemon's summary, the managed tabs, and what
   * the extension knows of its pages that the summary does not carry (`chatTabs`,
   * `unknownPages`: pages.js uiLists).
   */
  uiState() {
    return { connection: { ...this.#status }, summary: this.#summary, tabs: this.#bindings.tabs(), ...this.#pages.uiLists() };
  }

  /** What the watchdog looks at (core/watchdog.js): the connection and the managed pages' states. */
  watchdogSight() {
    return { connection: { ...this.#status }, pages: this.#bindings.managedPages() };
  }

  // ---------------------------------------------------------------- inputs

  start(now, openTabs = []) {
    return this.#input(now, () => {
      if (this.#journal.dropped) this.#log('warn', `journal: ${this.#journal.dropped} unreadable entries dropped`);
      if (this.#bindings.dropped) this.#log('warn', `bindings: ${this.#bindings.dropped} unreadable entries dropped`);
      this.#bindings.verifyTabs(Array.isArray(openTabs) ? openTabs : [], this.#settings.chatBaseUrl);
      this.#persistBindings();
      this.#commands.recover();
      this.#connectIfDue();
    });
  }

  wake(now) {
    return this.#input(now, () => {
      this.#link.wake(now);
      this.#tickAll();
    });
  }

  tick(now) {
    return this.#input(now, () => this.#tickAll());
  }

  settingsChanged(now, settings) {
    return this.#input(now, () => {
      const previous = this.#settings;
      this.#settings = settings;
      const reconnect = ['daemonUrls', 'token', 'executorId'].some((k) => String(previous[k]) !== String(settings[k]));
      if (reconnect) {
        if (this.#link.connectionId !== null) this.#dropConnection('settings changed', true);
        this.#link.reset(now);
        this.#setStatus({ status: 'offline' });
      }
      this.#commands.pump();
      this.#connectIfDue();
    });
  }

  socketOpened(now, connectionId) {
    return this.#input(now, () => {
      if (!this.#link.isCurrent(connectionId) || !this.#link.opening) {
        this.#emit({ kind: 'closeSocket', connectionId, reason: 'superseded' });
        return;
      }
      this.#link.opened(now);
      this.#send({
        v: PROTOCOL_VERSION,
        type: 'hello',
        token: this.#settings.token,
        executorId: this.#settings.executorId,
        protocol: PROTOCOL_VERSION,
        capabilities: { steering: true, operator: true, heartbeatEcho: true },
        concurrencyMax: this.#settings.concurrencyMax,
        bindings: this.#bindings.helloBindings(),
        journal: this.#journal.helloLines(),
      });
    });
  }

  socketMessage(now, connectionId, text) {
    return this.#input(now, () => {
      if (!this.#link.isCurrent(connectionId)) return;
      let message;
      try {
        message = decodeDaemonMessage(text);
      } catch (e) {
        if (!(e instanceof WireError)) throw e;
        this.#log('warn', `daemon sent ${e.code}: ${e.message}`);
        if (e.code === 'UNSUPPORTED_VERSION') {
          this.#link.holdAtCap(now);
          this.#dropConnection(e.message, true);
        }
        return;
      }
      this.#link.heard(now, message.type === 'heartbeat');
      this.#onDaemonMessage(message);
    });
  }

  socketClosed(now, connectionId, detail = 'connection closed') {
    return this.#input(now, () => {
      if (!this.#link.isCurrent(connectionId)) return;
      if (this.#link.opening) this.#probe(detail, false);
      else if (!this.#link.probing) this.#dropConnection(detail, false);
    });
  }

  probeAnswered(now, probeId, answer) {
    return this.#input(now, () => {
      if (this.#link.isCurrent(probeId) && this.#link.probing) this.#probed(answer ?? {});
    });
  }

  pageMessage(now, tabId, raw) {
    return this.#input(now, () => {
      let message;
      try {
        message = readPageMessage(raw);
      } catch (e) {
        this.#log('warn', `tab ${tabId}: ${e.message}`);
        return;
      }
      switch (message.type) {
        case 'page.hello':
        case 'page.facts':
          return this.#onPageReport(tabId, message);
        case 'submit.result':
          return this.#commands.submitResult(tabId, message);
        case 'reconcile.result':
          return this.#commands.reconcileResult(tabId, message);
        default:
          if (!this.#bindings.byTab(tabId)) this.#toPage(tabId, pageUnmanaged());
      }
    });
  }

  pageDisconnected(now, tabId) {
    return this.#input(now, () => this.#pages.disconnected(tabId));
  }

  tabOpened(now, requestId, tabId) {
    return this.#input(now, () => this.#commands.tabOpened(requestId, tabId));
  }

  tabOpenFailed(now, requestId, detail) {
    return this.#input(now, () => this.#commands.tabOpenFailed(requestId, detail));
  }

  tabUpdated(now, tabId, url) {
    return this.#input(now, () => {
      const page = this.#pages.get(tabId);
      const binding = this.#bindings.byTab(tabId);
      if (!page || !binding || typeof url !== 'string') return;
      page.url = url;
      this.#observe(binding, page);
      this.#commands.advance(binding.workerId);
    });
  }

  tabClosed(now, tabId) {
    return this.#input(now, () => this.#onTabClosed(tabId));
  }

  uiAction(now, replyId, request) {
    return this.#input(now, () => this.#operator.action(replyId, request));
  }

  uiQuery(now, replyId, request) {
    return this.#input(now, () => this.#operator.query(replyId, request));
  }

  // ---------------------------------------------------------------- input plumbing

  #input(now, handle) {
    this.#now = now;
    this.#effects = [];
    try {
      handle();
    } catch (e) {
      this.#log('error', `executor: ${e?.stack ?? e}`);
    }
    this.#emit({ kind: 'setTimer', atMs: this.#nextTimerAt() });
    return this.#effects;
  }

  #emit(effect) {
    this.#effects.push(effect);
  }

  #log(level, message) {
    this.#emit({ kind: 'log', level, message });
  }

  #persistJournal() {
    this.#emit({ kind: 'persist', key: 'journal', value: this.#journal.stored() });
  }

  #persistBindings() {
    this.#emit({ kind: 'persist', key: 'bindings', value: this.#bindings.stored() });
  }

  #toPage(tabId, message) {
    this.#emit({ kind: 'toPage', tabId, message });
  }

  /** Sends once `hello` went out (the daemon reads in order); dropped otherwise: `hello` carries the state. */
  #send(message) {
    if (!this.#link.canSend) return;
    let text;
    try {
      text = encodeMessage(message);
    } catch (e) {
      this.#log('error', `not sent: ${e.message}`);
      return;
    }
    this.#emit({ kind: 'send', connectionId: this.#link.connectionId, message, text });
  }

  #tickAll() {
    const now = this.#now;
    const expired = this.#link.expired(now);
    if (expired && this.#link.opening) this.#probe(expired, true);
    else if (expired && this.#link.probing) this.#probed(null);
    else if (expired) this.#dropConnection(expired, true);
    else if (this.#link.heartbeatDue(now)) this.#send({ v: PROTOCOL_VERSION, type: 'heartbeat' });
    this.#connectIfDue();
    this.#operator.tick(now);
    this.#commands.advanceAll();
  }

  #nextTimerAt() {
    const times = [this.#operator.nextAt()];
    if (this.#settings.token || this.#link.connectionId !== null) times.push(this.#link.nextWakeAt());
    times.push(...this.#commands.timerTimes());
    const due = times.filter((t) => t !== null);
    return due.length ? Math.max(this.#now, Math.min(...due)) : null;
  }

  // ---------------------------------------------------------------- connection

  #setStatus(status) {
    if (status.status === this.#status.status && status.detail === this.#status.detail) return;
    this.#status = status;
    this.#emit({ kind: 'uiChanged' });
    this.#overlays();
  }

  #connectIfDue() {
    if (!this.#settings.token) {
      this.#setStatus({ status: 'token_missing' });
      return;
    }
    const next = this.#link.openIfDue(this.#now, this.#settings.daemonUrls);
    if (next === null) return;
    this.#emit({ kind: 'openSocket', connectionId: next.id, url: next.url });
    if (this.#status.status !== 'unauthorized') this.#setStatus({ status: 'connecting' });
  }

  /** The socket did not open: its address is asked whether it is a standby (daemon-link.js probe). */
  #probe(detail, closeSocket) {
    if (closeSocket) this.#emit({ kind: 'closeSocket', connectionId: this.#link.connectionId, reason: detail });
    const { id, url } = this.#link.probe(this.#now, detail);
    this.#emit({ kind: 'probe', probeId: id, url });
  }

  /** The probe's answer: the next URL is opened, or the attempt ended and the status says what each said. */
  #probed(answer) {
    const { open, ended } = this.#link.probed(this.#now, answer);
    if (open) this.#emit({ kind: 'openSocket', connectionId: open.id, url: open.url });
    else if (this.#status.status !== 'unauthorized') this.#setStatus(ended);
  }

  #dropConnection(detail, closeSocket) {
    if (closeSocket) this.#emit({ kind: 'closeSocket', connectionId: this.#link.connectionId, reason: detail });
    this.#link.dropped(this.#now);
    if (this.#status.status !== 'unauthorized') this.#setStatus({ status: 'offline', detail });
    this.#operator.dropped();
  }

  #onDaemonMessage(message) {
    switch (message.type) {
      case 'welcome':
        return this.#onWelcome(message);
      case 'command':
        return this.#onCommand(message);
      case 'protocol.error':
        return this.#onProtocolError(message);
      case 'operator.summary':
        this.#summary = message;
        this.#emit({ kind: 'uiChanged' });
        return this.#overlays();
      case 'operator.result':
        return this.#operator.result(message);
      case 'operator.data':
        return this.#operator.data(message);
      case 'heartbeat':
        return; // the daemon's answer: `heard` counted it
    }
  }

  #onWelcome(welcome) {
    if (!this.#link.helloSent) {
      this.#log('warn', 'a second welcome was ignored');
      return;
    }
    if (welcome.executorId !== this.#settings.executorId) {
      this.#log('warn', `the daemon registered ${welcome.executorId}, not ${this.#settings.executorId}`);
    }
    this.#link.welcomed(this.#now, welcome.heartbeatMs);
    this.#setStatus({ status: 'live' });
  }

  #onProtocolError({ code, detail }) {
    this.#log('warn', `daemon protocol.error ${code}: ${detail}`);
    if (HOLD_AT_CAP_CODES.has(code)) this.#link.holdAtCap(this.#now);
    if (code === 'UNAUTHORIZED') this.#setStatus({ status: 'unauthorized', detail });
    if (PROTOCOL_ERROR_CLOSES[code]) this.#dropConnection(`${code}: ${detail}`, true);
  }

  // ---------------------------------------------------------------- operator channel

  /**
   * The daemon bound the claimed tab's conversation to `workerId` (or, for a new chat,
   * will create it there): the tab becomes its managed tab, the worker's old one is let go.
   */
  #bindClaimedTab(claim, workerId) {
    const page = this.#pages.get(claim.tabId);
    const other = this.#bindings.byTab(claim.tabId);
    if (!page || (other && other.workerId !== workerId)) {
      this.#log('warn', `tab ${claim.tabId} was closed or bound elsewhere before ${workerId} could take it`);
      return;
    }
    const current = this.#bindings.get(workerId);
    if (current?.tabId !== claim.tabId) this.#unmanage(current);
    const binding = this.#bindings.bind(workerId, claim.conversationUrl, claim.tabId);
    this.#persistBindings();
    this.#showManaged(claim.tabId, page, workerId);
    this.#emit({ kind: 'uiChanged' });
    if (claim.conversationUrl === '') return;
    this.#observe(binding, page);
    this.#send({ v: PROTOCOL_VERSION, type: 'binding', ...wireBinding(binding) });
  }

  /**
   * The worker's summary with what the overlay needs of its run: the run's id and title (Stop
   * run on /root), the names of the workers waiting for it (Stop's confirmation says so), and
   * the run's stopped-moving sentence when the daemon raised one. A worker of a finished run
   * is found in the summary's `finished`: its tab says it finished.
   */
  #workerSummary(workerId) {
    for (const run of [...(this.#summary?.runs ?? []), ...(this.#summary?.finished ?? [])]) {
      const worker = run.workers.find((w) => w.workerId === workerId);
      if (!worker) continue;
      // The overlay has no run to look names up in: they travel with the worker.
      const waitedOnByNames = run.workers.filter((w) => w.disposition === 'awaiting_dependency' && w.waitsFor === workerId)
        .map((w) => w.displayName || w.name);
      const withRun = { ...worker, runId: run.runId, runTitle: run.taskName ?? '', waitedOnByNames };
      return run.stoppedMoving ? { ...withRun, runStoppedMoving: run.stoppedMoving.text } : withRun;
    }
    return null;
  }

  #overlay(tabId, workerId) {
    const workerSummary = workerId === null ? null : this.#workerSummary(workerId);
    const unknownDetail = workerId === null ? null : this.#pages.get(tabId)?.unknownDetail ?? null;
    this.#emit({ kind: 'overlay', tabId, workerSummary, connection: { ...this.#status }, pageUnknown: unknownDetail });
  }

  #overlays() {
    for (const [tabId, page] of this.#pages.managed()) this.#overlay(tabId, page.workerId);
  }

  // ---------------------------------------------------------------- commands

  #onCommand(command) {
    if (this.#operator.holds(command)) return;
    if (command.kind === 'conversation.inspect') return this.#onInspect(command);
    if (command.kind === 'conversation.close') return this.#onClose(command);
    this.#commands.receive(command);
  }

  #bindingNamedBy(command) {
    const binding = this.#bindings.get(command.workerId);
    if (binding && binding.conversationUrl !== '' && sameConversation(binding.conversationUrl, command.conversationUrl)) return binding;
    this.#log('info', `${command.kind} ${command.commandId}: ${command.conversationUrl} is not managed here for ${command.workerId}`);
    return null;
  }

  /**
   * `conversation.inspect`: republish the binding as known (the daemon ignores a sequence
   * it already has; a report lost on the way gets through now) and ask the page for fresh
   * facts, which are published only if they changed. Not journaled, nothing typed.
   */
  #onInspect(command) {
    const binding = this.#bindingNamedBy(command);
    if (!binding) return;
    this.#send({ v: PROTOCOL_VERSION, type: 'binding', ...wireBinding(binding) });
    const page = binding.open && binding.tabId !== null ? this.#pages.get(binding.tabId) : null;
    if (!page?.connected) return;
    this.#observe(binding, page);
    this.#toPage(binding.tabId, pageInspect());
  }

  /** `conversation.close`: stop managing the conversation; its tab stays open as it is. */
  #onClose(command) {
    const binding = this.#bindingNamedBy(command);
    if (!binding) return;
    this.#unmanage(binding);
    this.#bindings.release(command.workerId);
    this.#persistBindings();
    this.#log('info', `${command.workerId} no longer manages ${command.conversationUrl} (conversation.close)`);
    this.#emit({ kind: 'uiChanged' });
  }

  #unmanage(binding) {
    if (!binding?.open || binding.tabId === null) return;
    this.#unverified.delete(binding.workerId);
    const page = this.#pages.get(binding.tabId);
    if (page?.connected) {
      page.workerId = null;
      this.#overlay(binding.tabId, null);
      this.#toPage(binding.tabId, pageUnmanaged());
    }
    this.#emit({ kind: 'uiChanged' });
  }

  // ---------------------------------------------------------------- pages and tabs

  #onPageReport(tabId, report) {
    const page = this.#pages.reported(tabId, report);
    let binding = this.#bindings.byTab(tabId);
    if (!binding) {
      binding = this.#bindings.awaitingTab(report.url);
      if (binding) {
        binding.tabId = tabId;
        this.#unverified.add(binding.workerId);
        this.#persistBindings();
        this.#emit({ kind: 'uiChanged' });
      }
    }
    if (!binding) {
      if (page.workerId !== null) this.#overlay(tabId, null);
      page.workerId = null;
      this.#toPage(tabId, pageUnmanaged());
      return;
    }
    const hello = report.type === 'page.hello';
    if (hello || page.workerId !== binding.workerId) this.#showManaged(tabId, page, binding.workerId);
    // Whether the page is one the adapter does not recognize (and why): when that changes,
    // the surfaces are told (the overlay, the popup and dashboard, the notification), whether
    // or not the state is published (a new chat's states wait for its conversation).
    if (this.#pages.noteUnknown(page, binding)) {
      this.#overlay(tabId, binding.workerId);
      this.#emit({ kind: 'uiChanged' });
    }
    this.#observe(binding, page);
    if (this.#unverified.has(binding.workerId) && sameConversation(page.url, binding.conversationUrl)) {
      this.#unverified.delete(binding.workerId);
      this.#send({ v: PROTOCOL_VERSION, type: 'binding', ...wireBinding(binding) });
    }
    this.#commands.pageReported(binding, page, tabId, hello);
  }

  /** The tab is the worker's: its page is told so (it watches for turn ends) and shows the overlay. */
  #showManaged(tabId, page, workerId) {
    page.workerId = workerId;
    this.#toPage(tabId, pageManaged(workerId));
    this.#overlay(tabId, workerId);
  }

  /**
   * Publishes the binding's state if it changed: the seq high-water is stored first. A new
   * chat's states wait until its URL settled and its create was reported `submitted`: the
   * daemon learns the conversation from that result. Only a page that stops the waiting
   * create is reported before (commands.js, docs/protocol/executor.md).
   */
  #observe(binding, page) {
    if (binding.conversationUrl === '') return;
    // After a submission the next known state is published even if it classifies the same
    // as the last one: a turn too short to be seen generating that ends with the same
    // block is still a turn end, and only a newer sequence tells the daemon so.
    const last = binding.publishNext ? null : binding.observation;
    const observation = nextObservation(last, binding.seq, classificationOf(binding, page));
    if (!observation) return;
    binding.publishNext = false;
    this.#publish(binding, observation);
  }

  #publish(binding, observation) {
    binding.observation = observation;
    binding.seq = observation.seq;
    this.#persistBindings();
    this.#send({ v: PROTOCOL_VERSION, type: 'conversation.state', workerId: binding.workerId, ...observation });
  }

  #onTabClosed(tabId) {
    this.#pages.delete(tabId);
    const binding = this.#bindings.byTab(tabId);
    if (!binding) return;
    binding.tabId = null;
    binding.open = false;
    this.#unverified.delete(binding.workerId);
    const closed = nextObservation(binding.observation, binding.seq, { state: 'closed' });
    if (closed && binding.conversationUrl) this.#publish(binding, closed);
    else this.#persistBindings();
    if (binding.conversationUrl) this.#send({ v: PROTOCOL_VERSION, type: 'binding', ...wireBinding(binding) });
    this.#emit({ kind: 'uiChanged' });
    this.#commands.tabClosed(binding.workerId);
  }
}
