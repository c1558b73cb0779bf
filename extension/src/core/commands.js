// The life of a journaled command, sans IO: from a daemon `command` (conversation.create,
// conversation.send, conversation.steer, or its command.cancel) to its `command.result`.
// The executor (executor.js) owns the connection, the pages and the bindings' state
// publication; it hands this module the shared journal, bindings and pages, and the
// effect plumbing, with the current time, and calls in when a command can move on.
//
// A command's life: journaled `received` (stored before `accepted` is sent) and queued per
// worker; when its turn comes it is `waiting` (for its tab, and for the page to allow it;
// the deadline bounds the wait), then `submitting` (`submission-started` stored before the
// page is asked), then for a conversation.create `settling` (its /c/<id> URL), and done.
// After a restart a `submission-started` command is `reconciling` (the page is asked for
// its nonce) and is never typed again. Failures are stored before they are sent.

import { wireBinding } from './bindings.js';
import { nextObservation } from './coalesce.js';
import { createWorkQueue } from './queue.js';
import { decideDelivery } from './delivery.js';
import { failedOutcome, submittedOutcome, FAILURE_CODES, PROTOCOL_VERSION } from './protocol.js';
import { nonceOf, pageUnmanaged, promptWithNonce, reconcileRequest, submitRequest } from './page-messages.js';
import { appOf } from './settings.js';
import { conversationUrlOf, isConversationUrl, onChatOrigin, sameConversation } from './urls.js';

/** A page that has not answered `submit` by then: the outcome is ambiguous, in milliseconds. */
export const SUBMIT_RESULT_TIMEOUT_MS = 20_000;
/** How long a restart waits for a page to answer `reconcile`, in milliseconds. */
export const RECONCILE_WAIT_MS = 20_000;
/** How long a new chat may take to settle on its /c/<id> URL after submission, in milliseconds. */
export const CREATE_URL_SETTLE_MS = 10_000;

const { AMBIGUOUS_SUBMISSION, CANCELLED, CONVERSATION_CLOSED, DEADLINE_EXCEEDED, STEERING_UNAVAILABLE } = FAILURE_CODES;
/** The content script's refusal when the page is generating at the moment of an idle submit. */
const PAGE_NOT_IDLE = 'NOT_IDLE';
/**
 * The page states that stop typing (docs/protocol/executor.md): a new chat showing one is
 * reported before its conversation exists, so the daemon holds or pauses at once.
 */
const PAGE_STOPS = new Set(['usage_limit', 'rate_limited', 'suspicious_activity', 'challenge', 'login_required', 'blocked_by_dialog']);

export class Commands {
  /**
   * What the executor shares: `journal`, `bindings`, `pages` (tabId -> page), `unverified`
   * (workers whose binding waits for its page), the getters `now` and `settings`, and the
   * effect plumbing `emit`, `log`, `send`, `persistJournal`, `persistBindings`, `toPage`,
   * plus `unmanage(binding)`, `classificationOf(binding, page)`, `observe(binding, page)`,
   * `publish(binding, observation)` and `pageReport(tabId, report)`.
   */
  #host;
  #queue = createWorkQueue();
  /** workerId -> the command being worked on: {commandId, workerId, kind, step, requestId, untilMs, tabId, tabRequestId, hadTab, stopReported?} */
  #active = new Map();
  /** openTab requestId -> {workerId, url} */
  #tabRequests = new Map();
  /** workerId -> commandId of a conversation.create reported before its URL settled */
  #unsettledCreates = new Map();
  #counters = { tab: 0, reconcile: 0 };

  constructor(host) {
    this.#host = host;
  }

  // ---------------------------------------------------------------- entry points

  /** After a restart: commands whose result was stored are finished, the rest queued again. */
  recover() {
    const plan = this.#journal.recoveryPlan();
    for (const entry of plan.finish) {
      const url = entry.kind === 'conversation.create' ? entry.conversationUrl : undefined;
      this.#journal.complete(entry.commandId, submittedOutcome(entry.stateSeq, url));
    }
    if (plan.finish.length) this.#persistJournal();
    for (const entry of [...plan.reconcile, ...plan.requeue]) this.#queue.enqueue(entry.workerId, entry.commandId);
    this.pump();
  }

  /** A journaled command from the daemon (conversation.create/send/steer) or its command.cancel. */
  receive(command) {
    if (command.kind === 'command.cancel') return this.#onCancel(command);
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
    this.pump();
  }

  /** A timer fired: every active command whose wait may have ended moves on. */
  advanceAll() {
    for (const workerId of [...this.#active.keys()]) this.advance(workerId);
  }

  /** When each active command next needs a tick (a waiting one: just past its deadline). */
  timerTimes() {
    const times = [];
    for (const rec of this.#active.values()) {
      times.push(rec.step === 'waiting' ? this.#journal.get(rec.commandId).deadline + 1 : rec.untilMs);
    }
    return times;
  }

  tabOpened(requestId, tabId) {
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
    if (page?.connected) this.#host.pageReport(tabId, { type: 'page.hello', url: page.url, facts: page.facts });
    else this.advance(request.workerId);
  }

  tabOpenFailed(requestId, detail) {
    const request = this.#tabRequests.get(requestId);
    this.#tabRequests.delete(requestId);
    const rec = request && this.#active.get(request.workerId);
    if (!rec || rec.tabRequestId !== requestId) return;
    rec.tabRequestId = null;
    this.#concludeFailed(rec.commandId, CONVERSATION_CLOSED, `could not open a tab: ${detail}`);
  }

  /** A managed page reported (its state already published): a new chat may settle, a command move on. */
  pageReported(binding, page, tabId, hello) {
    this.#settle(binding, page);
    const rec = this.#active.get(binding.workerId);
    if (hello && rec?.step === 'submitting' && rec.tabId === tabId) {
      // A new document: the answer to `submit` is lost with the old one. Ask for the nonce.
      Object.assign(rec, { step: 'reconciling', requestId: null, untilMs: this.#now + RECONCILE_WAIT_MS });
    }
    this.advance(binding.workerId);
  }

  /** The worker's managed tab closed (its binding already updated and published). */
  tabClosed(workerId) {
    const rec = this.#active.get(workerId);
    if (!rec) return;
    if (rec.step === 'submitting' || rec.step === 'reconciling') {
      this.#concludeFailed(rec.commandId, AMBIGUOUS_SUBMISSION, 'the tab closed while submitting; delivery unknown');
    } else if (rec.step === 'settling') {
      this.#reportSubmitted(rec, undefined);
    } else {
      this.advance(workerId);
    }
  }

  // ---------------------------------------------------------------- the executor's shared state and effects

  get #journal() { return this.#host.journal; }
  get #bindings() { return this.#host.bindings; }
  get #pages() { return this.#host.pages; }
  get #unverified() { return this.#host.unverified; }
  get #settings() { return this.#host.settings; }
  get #now() { return this.#host.now; }
  #emit(effect) { this.#host.emit(effect); }
  #log(level, message) { this.#host.log(level, message); }
  #send(message) { this.#host.send(message); }
  #persistJournal() { this.#host.persistJournal(); }
  #persistBindings() { this.#host.persistBindings(); }
  #toPage(tabId, message) { this.#host.toPage(tabId, message); }
  #unmanage(binding) { this.#host.unmanage(binding); }
  #classificationOf(binding, page) { return this.#host.classificationOf(binding, page); }
  #observe(binding, page) { this.#host.observe(binding, page); }

  #sendResult(commandId, outcome) {
    this.#send({ v: PROTOCOL_VERSION, type: 'command.result', commandId, outcome });
  }

  // ---------------------------------------------------------------- the command's steps

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
  /** Starts every queued command the concurrency cap allows. */
  pump() {
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
      this.advance(workerId);
    }
  }

  /** Ends the worker's active command (if it is this one) and starts what can start. */
  #release(workerId, commandId) {
    if (this.#active.get(workerId)?.commandId !== commandId) return;
    this.#active.delete(workerId);
    this.#queue.finish(workerId);
    this.pump();
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
  advance(workerId) {
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
    const classification = current ? this.#classificationOf(binding, page) : null;
    const decision = decideDelivery(rec.kind, current && { connected: page.connected, facts: page.facts, classification });
    if (decision.action === 'fail') this.#concludeFailed(rec.commandId, decision.code, decision.detail);
    else if (decision.action === 'submit') this.#startSubmission(rec, entry, binding, decision.mode);
    else if (rec.kind === 'conversation.create' && classification !== null) this.#reportStoppedNewChat(rec, binding, classification);
  }

  /**
   * A new chat that waits because its page stops typing (logged out, a challenge, a limit, a
   * dialog): the state is published now for the pending conversation (the daemon applies it
   * to the worker whose create is in flight), not after the create's deadline. Published once
   * per command and change: a later create on the same page reports it again.
   */
  #reportStoppedNewChat(rec, binding, classification) {
    if (classification.state !== 'error' || !PAGE_STOPS.has(classification.errorKind)) return;
    const observation = nextObservation(rec.stopReported ?? null, binding.seq, classification);
    if (observation === null) return;
    rec.stopReported = observation;
    this.#host.publish(binding, observation);
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
  /** Submission begins: `submission-started` is stored BEFORE the page is asked to type. */
  #startSubmission(rec, entry, binding, mode) {
    const text = promptWithNonce(entry.prompt, entry.attemptId);
    this.#journal.startSubmission(rec.commandId, binding.seq);
    this.#persistJournal();
    Object.assign(rec, {
      step: 'submitting', requestId: `submit:${rec.commandId}`, tabId: binding.tabId, untilMs: this.#now + SUBMIT_RESULT_TIMEOUT_MS,
      userTurnsBefore: this.#pages.get(binding.tabId)?.facts?.userTurns ?? 0,
    });
    // The page chooses the app (when one is set) before its first send since it loaded.
    this.#toPage(binding.tabId, submitRequest(rec.requestId, text, nonceOf(entry.attemptId), mode, appOf(this.#settings)));
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

  /** The page's answer to `submit`. */
  submitResult(tabId, result) {
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

  /** The page's answer to `reconcile`. */
  reconcileResult(tabId, result) {
    const rec = this.#activeFor(tabId, result.requestId, 'reconciling');
    if (!rec) return;
    if (result.found) this.#submitted(rec);
    else this.#concludeFailed(rec.commandId, AMBIGUOUS_SUBMISSION, 'submission had started and no user turn carries its nonce; delivery unknown');
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
}
