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
//   pageMessage(now, tabId, message)     anything a content script sent on the `page` port
//   pageDisconnected(now, tabId)         its port dropped
//   tabOpened(now, requestId, tabId) / tabOpenFailed(now, requestId, detail)
//   tabUpdated(now, tabId, url) / tabClosed(now, tabId)
//   uiAction(now, replyId, request) / uiQuery(now, replyId, request)
// Queries (no effects): uiState(), settings.
//
// Effects:
//   {kind:'persist', key:'journal'|'bindings', value}
//   {kind:'openSocket', connectionId, url} / {kind:'closeSocket', connectionId, reason}
//   {kind:'send', connectionId, message, text}   text is the canonical encoding of message
//   {kind:'toPage', tabId, message}      over the tab's `page` port
//   {kind:'openTab', requestId, workerId, url}   answer with tabOpened / tabOpenFailed
//   {kind:'overlay', tabId, workerSummary, connection}   workerSummary null hides it
//   {kind:'uiChanged'}                   broadcast `ui.changed`
//   {kind:'uiReply', replyId, response}  the answer to uiAction / uiQuery
//   {kind:'log', level, message}
//   {kind:'setTimer', atMs}              always last: call tick(atMs) then (null: no timer)
//
// A command's life: journaled `received` (stored before `accepted` is sent) and queued per
// worker; when its turn comes it is `waiting` (for its tab, and for the page to allow it;
// the deadline bounds the wait), then `submitting` (`submission-started` stored before the
// page is asked), then for a conversation.create `settling` (its /c/<id> URL), and done.
// After a restart a `submission-started` command is `reconciling` (the page is asked for
// its nonce) and is never typed again. Failures are stored before they are sent.
//
// Bad input (a malformed frame, a page message that does not fit) is logged and ignored;
// no input throws.

import { nextObservation } from './coalesce.js';
import { classify, UNKNOWN } from './classify.js';
import { createBindings, wireBinding } from './bindings.js';
import { createJournal } from './journal.js';
import { createWorkQueue } from './queue.js';
import { decideDelivery } from './delivery.js';
import { DaemonLink } from './daemon-link.js';
import { PendingReplies } from './pending-replies.js';
import {
  decodeDaemonMessage, encodeMessage, failedOutcome, submittedOutcome, FAILURE_CODES, PROTOCOL_ERROR_CLOSES,
  PROTOCOL_VERSION, WireError,
} from './protocol.js';
import {
  nonceOf, pageInspect, pageManaged, pageUnmanaged, promptWithNonce, readPageMessage, reconcileRequest, submitRequest,
} from './page-messages.js';
import { conversationUrlOf, isConversationUrl, onChatOrigin, sameConversation } from './urls.js';

/** A page that has not answered `submit` by then: the outcome is ambiguous, in milliseconds. */
export const SUBMIT_RESULT_TIMEOUT_MS = 20_000;
/** How long a restart waits for a page to answer `reconcile`, in milliseconds. */
export const RECONCILE_WAIT_MS = 20_000;
/** How long a new chat may take to settle on its /c/<id> URL after submission, in milliseconds. */
export const CREATE_URL_SETTLE_MS = 10_000;
/** An operator action or query unanswered by then gets TIMEOUT, in milliseconds. */
export const OPERATOR_REPLY_TIMEOUT_MS = 10_000;

/** protocol.error codes after which reconnecting waits the longest backoff (no fast loop). */
const HOLD_AT_CAP_CODES = new Set(['UNAUTHORIZED', 'REPLACED', 'INVALID_EXECUTOR_ID', 'UNSUPPORTED_VERSION']);

const { AMBIGUOUS_SUBMISSION, CANCELLED, CONVERSATION_CLOSED, DEADLINE_EXCEEDED, STEERING_UNAVAILABLE } = FAILURE_CODES;
/** The content script's refusal when the page is generating at the moment of an idle submit. */
const PAGE_NOT_IDLE = 'NOT_IDLE';

export class Executor {
  #settings;
  #journal;
  #bindings;
  #queue = createWorkQueue();
  /** workerId -> the command being worked on: {commandId, workerId, kind, step, requestId, untilMs, tabId, tabRequestId, hadTab} */
  #active = new Map();
  /**
   * tabId -> {url, facts, connected, workerId, reports, staleThrough} for every tab whose
   * content script reported; `reports` counts its reports, and facts from report number
   * `staleThrough` or earlier predate the tab's last submission (not a basis for the next).
   */
  #pages = new Map();
  /** openTab requestId -> {workerId, url} */
  #tabRequests = new Map();
  /** workers whose binding waits for its page to confirm it (then a `binding` is sent) */
  #unverified = new Set();
  /** workerId -> commandId of a conversation.create reported before its URL settled */
  #unsettledCreates = new Map();
  #link;
  #status = { status: 'offline' };
  #summary = null;
  #pendingUi = new PendingReplies();
  #counters = { tab: 0, operator: 0, reconcile: 0 };
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
  }

  get settings() {
    return this.#settings;
  }

  /** What `ui.state` answers. */
  uiState() {
    return { connection: { ...this.#status }, summary: this.#summary, tabs: this.#bindings.tabs() };
  }

  // ---------------------------------------------------------------- inputs

  start(now, openTabs = []) {
    return this.#input(now, () => {
      if (this.#journal.dropped) this.#log('warn', `journal: ${this.#journal.dropped} unreadable entries dropped`);
      if (this.#bindings.dropped) this.#log('warn', `bindings: ${this.#bindings.dropped} unreadable entries dropped`);
      this.#bindings.verifyTabs(Array.isArray(openTabs) ? openTabs : [], this.#settings.chatBaseUrl);
      this.#persistBindings();
      const plan = this.#journal.recoveryPlan();
      for (const entry of plan.finish) {
        const url = entry.kind === 'conversation.create' ? entry.conversationUrl : undefined;
        this.#journal.complete(entry.commandId, submittedOutcome(entry.stateSeq, url));
      }
      if (plan.finish.length) this.#persistJournal();
      for (const entry of [...plan.reconcile, ...plan.requeue]) this.#queue.enqueue(entry.workerId, entry.commandId);
      this.#pump();
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
      const reconnect = ['daemonUrl', 'token', 'executorId'].some((k) => previous[k] !== settings[k]);
      if (reconnect) {
        if (this.#link.connectionId !== null) this.#dropConnection('settings changed', true);
        this.#link.reset(now);
        this.#setStatus({ status: 'offline' });
      }
      this.#pump();
      this.#connectIfDue();
    });
  }

  socketOpened(now, connectionId) {
    return this.#input(now, () => {
      if (!this.#link.isCurrent(connectionId)) {
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
        capabilities: { steering: true, operator: true },
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
      this.#onDaemonMessage(message);
    });
  }

  socketClosed(now, connectionId, detail = 'connection closed') {
    return this.#input(now, () => {
      if (this.#link.isCurrent(connectionId)) this.#dropConnection(detail, false);
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
          return this.#onSubmitResult(tabId, message);
        case 'reconcile.result':
          return this.#onReconcileResult(tabId, message);
        default:
          if (!this.#bindings.byTab(tabId)) this.#toPage(tabId, pageUnmanaged());
      }
    });
  }

  pageDisconnected(now, tabId) {
    return this.#input(now, () => {
      const page = this.#pages.get(tabId);
      if (page) page.connected = false;
    });
  }

  tabOpened(now, requestId, tabId) {
    return this.#input(now, () => {
      const request = this.#tabRequests.get(requestId);
      this.#tabRequests.delete(requestId);
      const binding = request ? this.#bindings.get(request.workerId) : null;
      const wanted = binding?.open && binding.tabId === null && (binding.conversationUrl === ''
        ? request.url === this.#settings.chatBaseUrl
        : sameConversation(binding.conversationUrl, request.url));
      if (!wanted) {
        this.#log('info', `tab ${tabId} opened for a binding that changed meanwhile; it stays unmanaged`);
        if (this.#pages.get(tabId)?.connected) this.#toPage(tabId, pageUnmanaged());
        return;
      }
      binding.tabId = tabId;
      this.#persistBindings();
      this.#emit({ kind: 'uiChanged' });
      const rec = this.#active.get(request.workerId);
      if (rec?.tabRequestId === requestId) Object.assign(rec, { tabRequestId: null, hadTab: true });
      const page = this.#pages.get(tabId);
      if (page?.connected) this.#onPageReport(tabId, { type: 'page.hello', url: page.url, facts: page.facts });
      else this.#advance(request.workerId);
    });
  }

  tabOpenFailed(now, requestId, detail) {
    return this.#input(now, () => {
      const request = this.#tabRequests.get(requestId);
      this.#tabRequests.delete(requestId);
      const rec = request && this.#active.get(request.workerId);
      if (!rec || rec.tabRequestId !== requestId) return;
      rec.tabRequestId = null;
      this.#concludeFailed(rec.commandId, CONVERSATION_CLOSED, `could not open a tab: ${detail}`);
    });
  }

  tabUpdated(now, tabId, url) {
    return this.#input(now, () => {
      const page = this.#pages.get(tabId);
      const binding = this.#bindings.byTab(tabId);
      if (!page || !binding || typeof url !== 'string') return;
      page.url = url;
      this.#observe(binding, page);
      this.#advance(binding.workerId);
    });
  }

  tabClosed(now, tabId) {
    return this.#input(now, () => this.#onTabClosed(tabId));
  }

  uiAction(now, replyId, request) {
    return this.#input(now, () => {
      const actionId = `act-${this.#link.connectionId ?? 0}-${++this.#counters.operator}`;
      const message = { v: PROTOCOL_VERSION, type: 'operator.action', actionId, action: request?.action };
      for (const field of ['workerId', 'runId', 'text']) if (request?.[field] !== undefined) message[field] = request[field];
      this.#askDaemon(replyId, actionId, message);
    });
  }

  uiQuery(now, replyId, request) {
    return this.#input(now, () => {
      const queryId = `q-${this.#link.connectionId ?? 0}-${++this.#counters.operator}`;
      const message = { v: PROTOCOL_VERSION, type: 'operator.query', queryId, query: request?.query };
      for (const field of ['workerId', 'afterSequence', 'limit']) if (request?.[field] !== undefined) message[field] = request[field];
      this.#askDaemon(replyId, queryId, message);
    });
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

  #sendResult(commandId, outcome) {
    this.#send({ v: PROTOCOL_VERSION, type: 'command.result', commandId, outcome });
  }

  #tickAll() {
    const now = this.#now;
    const expired = this.#link.expired(now);
    if (expired) this.#dropConnection(expired, true);
    else if (this.#link.heartbeatDue(now)) this.#send({ v: PROTOCOL_VERSION, type: 'heartbeat' });
    this.#connectIfDue();
    for (const replyId of this.#pendingUi.expire(now)) {
      this.#reply(replyId, uiError('TIMEOUT', `no answer from the daemon within ${OPERATOR_REPLY_TIMEOUT_MS / 1000} s`));
    }
    for (const workerId of [...this.#active.keys()]) this.#advance(workerId);
  }

  #nextTimerAt() {
    const times = [this.#pendingUi.nextExpiryAt()];
    if (this.#settings.token || this.#link.connectionId !== null) times.push(this.#link.nextWakeAt());
    for (const rec of this.#active.values()) {
      times.push(rec.step === 'waiting' ? this.#journal.get(rec.commandId).deadline + 1 : rec.untilMs);
    }
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
    const id = this.#link.openIfDue(this.#now);
    if (id === null) return;
    this.#emit({ kind: 'openSocket', connectionId: id, url: this.#settings.daemonUrl });
    if (this.#status.status !== 'unauthorized') this.#setStatus({ status: 'connecting' });
  }

  #dropConnection(detail, closeSocket) {
    if (closeSocket) this.#emit({ kind: 'closeSocket', connectionId: this.#link.connectionId, reason: detail });
    this.#link.dropped(this.#now);
    if (this.#status.status !== 'unauthorized') this.#setStatus({ status: 'offline', detail });
    for (const replyId of this.#pendingUi.takeAll()) this.#reply(replyId, uiError('OFFLINE', 'the daemon connection closed'));
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
        return this.#answerPending(message.actionId, message.ok ? { ok: true } : { ok: false, error: message.error ?? null });
      case 'operator.data': {
        const response = { ok: message.ok };
        if (message.data !== undefined) response.data = message.data;
        if (message.error !== undefined) response.error = message.error;
        return this.#answerPending(message.queryId, response);
      }
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

  #askDaemon(replyId, correlationId, message) {
    if (!this.#link.live) {
      this.#reply(replyId, uiError('OFFLINE', 'not connected to the daemon'));
      return;
    }
    try {
      encodeMessage(message);
    } catch (e) {
      this.#reply(replyId, uiError('INVALID_ARGUMENT', e.message));
      return;
    }
    this.#pendingUi.add(correlationId, replyId, this.#now + OPERATOR_REPLY_TIMEOUT_MS);
    this.#send(message);
  }

  #answerPending(correlationId, response) {
    const replyId = this.#pendingUi.take(correlationId);
    if (replyId === null) this.#log('info', `an answer for ${correlationId} came after its caller gave up`);
    else this.#reply(replyId, response);
  }

  #reply(replyId, response) {
    this.#emit({ kind: 'uiReply', replyId, response });
  }

  #workerSummary(workerId) {
    for (const run of this.#summary?.runs ?? []) {
      const worker = run.workers.find((w) => w.workerId === workerId);
      if (worker) return worker;
    }
    return null;
  }

  #overlay(tabId, workerId) {
    const workerSummary = workerId === null ? null : this.#workerSummary(workerId);
    this.#emit({ kind: 'overlay', tabId, workerSummary, connection: { ...this.#status } });
  }

  #overlays() {
    for (const [tabId, page] of this.#pages) if (page.connected && page.workerId !== null) this.#overlay(tabId, page.workerId);
  }

  // ---------------------------------------------------------------- commands

  #onCommand(command) {
    if (command.kind === 'command.cancel') return this.#onCancel(command);
    if (command.kind === 'conversation.inspect') return this.#onInspect(command);
    if (command.kind === 'conversation.close') return this.#onClose(command);
    const entry = this.#journal.get(command.commandId);
    if (entry) return this.#answerDuplicate(entry);
    const sameKey = this.#journal.submittedKey(command.idempotencyKey);
    if (sameKey) {
      this.#sendResult(command.commandId, failedOutcome(AMBIGUOUS_SUBMISSION,
        `idempotency key ${command.idempotencyKey} was already submitted as ${sameKey.commandId}`));
      return;
    }
    this.#journal.receive(command, this.#now);
    this.#persistJournal();
    this.#sendResult(command.commandId, { status: 'accepted' });
    this.#queue.enqueue(command.workerId, command.commandId);
    this.#pump();
  }

  /** A command id seen before is never worked on twice: answer with what is known. */
  #answerDuplicate(entry) {
    if (entry.phase === 'completed') this.#sendResult(entry.commandId, entry.result);
    else if (entry.phase === 'submitted') this.#sendResult(entry.commandId, this.#submittedOutcomeOf(entry));
    else this.#log('info', `${entry.commandId} is already ${entry.phase}; its result will follow`);
  }

  #submittedOutcomeOf(entry) {
    return submittedOutcome(entry.stateSeq, entry.kind === 'conversation.create' ? entry.conversationUrl : undefined);
  }

  #onCancel(command) {
    const entry = this.#journal.get(command.commandId);
    const withdrawn = failedOutcome(CANCELLED, 'withdrawn by command.cancel before submission began');
    if (!entry) {
      this.#journal.recordWithdrawn({ ...command, prompt: '' }, withdrawn, this.#now);
      this.#persistJournal();
      this.#sendResult(command.commandId, withdrawn);
      return;
    }
    if (entry.phase !== 'received') return this.#answerDuplicate(entry);
    this.#queue.withdraw(entry.commandId);
    this.#concludeFailed(entry.commandId, CANCELLED, withdrawn.detail);
  }

  /** The worker's binding when it is `command`'s conversation, else null (logged). */
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

  #pump() {
    for (const { workerId, commandId } of this.#queue.startNext(this.#settings.concurrencyMax)) {
      const entry = this.#journal.get(commandId);
      if (!entry || entry.phase === 'completed' || entry.phase === 'submitted') {
        this.#queue.finish(workerId);
        continue;
      }
      const reconciling = entry.phase === 'submission-started';
      this.#active.set(workerId, {
        commandId, workerId, kind: entry.kind, step: reconciling ? 'reconciling' : 'waiting', requestId: null,
        untilMs: reconciling ? this.#now + RECONCILE_WAIT_MS : null, tabId: null, tabRequestId: null, hadTab: false,
      });
      this.#advance(workerId);
    }
  }

  /** Ends the worker's active command (if it is this one) and starts what can start. */
  #release(workerId, commandId) {
    if (this.#active.get(workerId)?.commandId !== commandId) return;
    this.#active.delete(workerId);
    this.#queue.finish(workerId);
    this.#pump();
  }

  /** A definite or ambiguous failure: stored as completed BEFORE it is sent. */
  #concludeFailed(commandId, code, detail) {
    const entry = this.#journal.complete(commandId, failedOutcome(code, detail));
    this.#persistJournal();
    this.#sendResult(commandId, entry.result);
    this.#release(entry.workerId, commandId);
  }

  /** The prompt is in: `submitted` was stored; report it, then store the result. */
  #reportSubmitted(rec, conversationUrl) {
    const entry = this.#journal.get(rec.commandId);
    const outcome = submittedOutcome(entry.stateSeq, conversationUrl);
    this.#sendResult(rec.commandId, outcome);
    this.#journal.complete(rec.commandId, outcome);
    this.#persistJournal();
    this.#release(rec.workerId, rec.commandId);
  }

  /** Moves the worker's active command on as far as the page allows now. */
  #advance(workerId) {
    const rec = this.#active.get(workerId);
    if (!rec) return;
    const expired = rec.untilMs !== null && this.#now >= rec.untilMs;
    switch (rec.step) {
      case 'waiting':
        return this.#advanceWaiting(rec);
      case 'submitting':
        if (expired) this.#concludeFailed(rec.commandId, AMBIGUOUS_SUBMISSION, 'the page did not answer the submission');
        return;
      case 'reconciling':
        return this.#advanceReconciling(rec, expired);
      case 'settling':
        if (expired) {
          this.#unsettledCreates.set(workerId, rec.commandId);
          this.#reportSubmitted(rec, undefined);
        }
    }
  }

  #advanceWaiting(rec) {
    const entry = this.#journal.get(rec.commandId);
    if (this.#now > entry.deadline) {
      this.#concludeFailed(rec.commandId, DEADLINE_EXCEEDED, 'the deadline passed before submission started');
      return;
    }
    const binding = rec.kind === 'conversation.create' ? this.#newChatBinding(rec) : this.#conversationBinding(rec, entry);
    if (!binding) return;
    const page = this.#pages.get(binding.tabId);
    const current = page && page.reports > page.staleThrough;
    const decision = decideDelivery(rec.kind, current && {
      connected: page.connected, facts: page.facts, classification: this.#classificationOf(binding, page),
    });
    if (decision.action === 'fail') this.#concludeFailed(rec.commandId, decision.code, decision.detail);
    else if (decision.action === 'submit') this.#startSubmission(rec, entry, binding, decision.mode);
  }

  /** conversation.create: the worker's new-chat binding with its tab, or null while one opens. */
  #newChatBinding(rec) {
    const current = this.#bindings.get(rec.workerId);
    if (current?.open && current.conversationUrl === '' && current.tabId !== null) {
      rec.hadTab = true;
      return current;
    }
    if (rec.tabRequestId) return null;
    if (rec.hadTab) {
      this.#concludeFailed(rec.commandId, CONVERSATION_CLOSED, 'the new chat\'s tab was closed before submission');
      return null;
    }
    if (!this.#ensureTabSlot(rec)) return null;
    this.#unmanage(current);
    this.#bindings.bind(rec.workerId, '', null);
    this.#persistBindings();
    this.#openTab(rec, this.#settings.chatBaseUrl);
    return null;
  }

  /** send/steer: the binding of the command's conversation with its tab, or null (waiting or concluded). */
  #conversationBinding(rec, entry) {
    const target = conversationUrlOf(entry.conversationUrl);
    if (!target || !onChatOrigin(target, this.#settings.chatBaseUrl)) {
      this.#concludeFailed(rec.commandId, CONVERSATION_CLOSED, `not a conversation of ${this.#settings.chatBaseUrl}: ${entry.conversationUrl}`);
      return null;
    }
    const steer = rec.kind === 'conversation.steer';
    const current = this.#bindings.get(rec.workerId);
    if (current && sameConversation(current.conversationUrl, target)) {
      if (!current.open) {
        this.#concludeFailed(rec.commandId, CONVERSATION_CLOSED, 'the conversation\'s managed tab was closed');
        return null;
      }
      if (current.tabId !== null) {
        rec.hadTab = true;
        return current;
      }
      if (steer) {
        this.#concludeFailed(rec.commandId, STEERING_UNAVAILABLE, 'no tab shows the conversation now');
        return null;
      }
      if (!rec.tabRequestId && this.#ensureTabSlot(rec)) {
        this.#unverified.add(rec.workerId);
        this.#openTab(rec, current.conversationUrl);
      }
      return null;
    }
    if (steer) {
      this.#concludeFailed(rec.commandId, STEERING_UNAVAILABLE, 'the conversation is not open in this browser');
      return null;
    }
    if (this.#ensureTabSlot(rec)) {
      this.#unmanage(current);
      this.#bindings.bind(rec.workerId, target, null);
      this.#persistBindings();
      this.#unverified.add(rec.workerId);
      this.#openTab(rec, target);
    }
    return null;
  }

  /**
   * Whether the command's worker may open one more managed tab (its own current tab is
   * given up for it); when not, the command fails definitely (nothing was typed).
   */
  #ensureTabSlot(rec) {
    const own = this.#bindings.get(rec.workerId);
    const ownTab = own?.open && own.tabId !== null ? 1 : 0;
    const used = this.#bindings.managedTabCount() - ownTab + this.#tabRequests.size;
    if (used < this.#settings.managedMax) return true;
    this.#concludeFailed(rec.commandId, CONVERSATION_CLOSED, `${used} managed tabs are open (managedMax ${this.#settings.managedMax})`);
    return false;
  }

  #openTab(rec, url) {
    const requestId = `tab-${++this.#counters.tab}`;
    this.#tabRequests.set(requestId, { workerId: rec.workerId, url });
    rec.tabRequestId = requestId;
    this.#emit({ kind: 'openTab', requestId, workerId: rec.workerId, url });
  }

  /** The tab of a binding about to be replaced stops being managed. */
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

  /** Submission begins: `submission-started` is stored BEFORE the page is asked to type. */
  #startSubmission(rec, entry, binding, mode) {
    const text = promptWithNonce(entry.prompt, entry.attemptId);
    this.#journal.startSubmission(rec.commandId, binding.seq);
    this.#persistJournal();
    Object.assign(rec, {
      step: 'submitting', requestId: `submit:${rec.commandId}`, tabId: binding.tabId, untilMs: this.#now + SUBMIT_RESULT_TIMEOUT_MS,
      userTurnsBefore: this.#pages.get(binding.tabId)?.facts?.userTurns ?? 0,
    });
    this.#toPage(binding.tabId, submitRequest(rec.requestId, text, nonceOf(entry.attemptId), mode));
  }

  #advanceReconciling(rec, expired) {
    const entry = this.#journal.get(rec.commandId);
    const binding = this.#bindings.get(rec.workerId);
    const ours = binding?.open && (rec.kind === 'conversation.create'
      ? binding.conversationUrl === '' || sameConversation(binding.conversationUrl, entry.conversationUrl)
      : sameConversation(binding.conversationUrl, entry.conversationUrl));
    const unreachable = !ours || (binding.tabId === null && binding.conversationUrl === '');
    if (unreachable || expired) {
      const why = unreachable ? 'its tab is gone' : 'its page did not answer';
      this.#concludeFailed(rec.commandId, AMBIGUOUS_SUBMISSION, `submission had started and ${why}; delivery unknown`);
      return;
    }
    const page = binding.tabId === null ? null : this.#pages.get(binding.tabId);
    if (!page?.connected || rec.requestId) return;
    rec.requestId = `reconcile:${rec.commandId}:${++this.#counters.reconcile}`;
    rec.tabId = binding.tabId;
    this.#toPage(binding.tabId, reconcileRequest(rec.requestId, nonceOf(entry.attemptId)));
  }

  /** `submitted` is stored; a create waits (briefly) for its conversation URL to settle. */
  #submitted(rec) {
    this.#journal.markSubmitted(rec.commandId);
    this.#persistJournal();
    const submittedTo = this.#bindings.get(rec.workerId);
    if (submittedTo) submittedTo.publishNext = true;
    // Facts from before the prompt went in are no basis for the next command; facts that
    // already show its user turn (the whole turn may have run before this answer) are.
    const submittedOn = this.#pages.get(rec.tabId);
    const showsThePrompt = (submittedOn?.facts?.userTurns ?? 0) > (rec.userTurnsBefore ?? Infinity);
    if (submittedOn && !showsThePrompt) submittedOn.staleThrough = submittedOn.reports;
    if (rec.kind !== 'conversation.create') {
      this.#reportSubmitted(rec, undefined);
      return;
    }
    const binding = this.#bindings.get(rec.workerId);
    Object.assign(rec, { step: 'settling', requestId: null, untilMs: this.#now + CREATE_URL_SETTLE_MS });
    if (binding?.conversationUrl) {
      this.#reportSubmitted(rec, binding.conversationUrl);
      return;
    }
    const page = binding && binding.tabId !== null ? this.#pages.get(binding.tabId) : null;
    if (page) this.#settle(binding, page);
  }

  #activeFor(tabId, requestId, step) {
    for (const rec of this.#active.values()) {
      if (rec.requestId === requestId && rec.step === step && rec.tabId === tabId) return rec;
    }
    this.#log('info', `tab ${tabId}: no ${step} request ${requestId}; answer ignored`);
    return null;
  }

  #onSubmitResult(tabId, result) {
    const rec = this.#activeFor(tabId, result.requestId, 'submitting');
    if (!rec) return;
    if (result.status === 'submitted') this.#submitted(rec);
    else if (result.touched) {
      this.#concludeFailed(rec.commandId, AMBIGUOUS_SUBMISSION, `the page failed after touching the composer: ${result.code} ${result.detail}`.trim());
    } else if (result.code === PAGE_NOT_IDLE) {
      // The page started generating between the decision and the submission: nothing was
      // typed. The daemon knows this as a composer it cannot use now (it retries later).
      this.#concludeFailed(rec.commandId, FAILURE_CODES.COMPOSER_BUSY, `the conversation was not idle: ${result.detail ?? ''}`.trim());
    } else this.#concludeFailed(rec.commandId, result.code, result.detail);
  }

  #onReconcileResult(tabId, result) {
    const rec = this.#activeFor(tabId, result.requestId, 'reconciling');
    if (!rec) return;
    if (result.found) this.#submitted(rec);
    else this.#concludeFailed(rec.commandId, AMBIGUOUS_SUBMISSION, 'submission had started and no user turn carries its nonce; delivery unknown');
  }

  // ---------------------------------------------------------------- pages and tabs

  #onPageReport(tabId, report) {
    const page = this.#pages.get(tabId) ?? { workerId: null, reports: 0, staleThrough: 0 };
    Object.assign(page, { url: report.url, facts: report.facts, connected: true, reports: page.reports + 1 });
    this.#pages.set(tabId, page);
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
    if (hello || page.workerId !== binding.workerId) {
      page.workerId = binding.workerId;
      this.#toPage(tabId, pageManaged(binding.workerId));
      this.#overlay(tabId, binding.workerId);
    }
    this.#observe(binding, page);
    if (this.#unverified.has(binding.workerId) && sameConversation(page.url, binding.conversationUrl)) {
      this.#unverified.delete(binding.workerId);
      this.#send({ v: PROTOCOL_VERSION, type: 'binding', ...wireBinding(binding) });
    }
    this.#settle(binding, page);
    const rec = this.#active.get(binding.workerId);
    if (hello && rec?.step === 'submitting' && rec.tabId === tabId) {
      // A new document: the answer to `submit` is lost with the old one. Ask for the nonce.
      Object.assign(rec, { step: 'reconciling', requestId: null, untilMs: this.#now + RECONCILE_WAIT_MS });
    }
    this.#advance(binding.workerId);
  }

  /** A managed tab showing another conversation than its binding's tells nothing about it. */
  #classificationOf(binding, page) {
    if (binding.conversationUrl && !sameConversation(page.url, binding.conversationUrl)) return UNKNOWN;
    return classify(page.facts);
  }

  /**
   * Publishes the binding's state if it changed: the seq high-water is stored first. A new
   * chat's states wait until its URL settled and its create was reported `submitted`: the
   * daemon learns the conversation from that result and ignores states before it.
   */
  #observe(binding, page) {
    if (binding.conversationUrl === '') return;
    // After a submission the next known state is published even if it classifies the same
    // as the last one: a turn too short to be seen generating that ends with the same
    // block is still a turn end, and only a newer sequence tells the daemon so.
    const last = binding.publishNext ? null : binding.observation;
    const observation = nextObservation(last, binding.seq, this.#classificationOf(binding, page));
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

  /** A new chat settled on /c/<id> after our submission: record it and report it. */
  #settle(binding, page) {
    if (binding.conversationUrl !== '' || !isConversationUrl(page.url)) return;
    const rec = this.#active.get(binding.workerId);
    const settling = rec?.step === 'settling';
    const commandId = settling ? rec.commandId : this.#unsettledCreates.get(binding.workerId);
    if (!commandId) return;
    this.#unsettledCreates.delete(binding.workerId);
    binding.conversationUrl = conversationUrlOf(page.url);
    this.#persistBindings();
    this.#journal.setConversationUrl(commandId, binding.conversationUrl);
    this.#persistJournal();
    if (settling) this.#reportSubmitted(rec, binding.conversationUrl);
    this.#send({ v: PROTOCOL_VERSION, type: 'binding', ...wireBinding(binding) });
    this.#observe(binding, page);
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
    const rec = this.#active.get(binding.workerId);
    if (!rec) return;
    if (rec.step === 'submitting' || rec.step === 'reconciling') {
      this.#concludeFailed(rec.commandId, AMBIGUOUS_SUBMISSION, 'the tab closed while submitting; delivery unknown');
    } else if (rec.step === 'settling') {
      this.#reportSubmitted(rec, undefined);
    } else {
      this.#advance(binding.workerId);
    }
  }
}

function uiError(code, message) {
  return { ok: false, error: { code, message } };
}
