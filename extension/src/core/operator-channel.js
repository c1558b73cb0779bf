// The operator channel of the executor, sans IO: a person's actions and queries from the
// popup, overlay and dashboard become `operator.action` / `operator.query` frames, and the
// daemon's `operator.result` / `operator.data` answer them (or TIMEOUT / OFFLINE does).
// "Start a run here" and "Attach this conversation to…" also claim the tab they were asked
// in (tab-claims.js): once the result names the worker, the host binds the tab to it, and
// a `conversation.create` that arrived meanwhile goes on only then.
//
// The host (executor.js) gives: `now`, `live` and `connectionId` (the daemon link),
// `send(message)`, `reply(replyId, response)`, `log(level, text)`, `tabOf(tabId)`
// ({page, managedBy}: the tab's last report and the worker bound to it, or null),
// `bindTab(claim, workerId)` and `command(command)` (a held command, processed now).

import { PendingReplies } from './pending-replies.js';
import { encodeMessage, PROTOCOL_VERSION } from './protocol.js';
import { CLAIM_ACTIONS, claimRequest, TabClaims } from './tab-claims.js';

/** An operator action or query unanswered by then gets TIMEOUT, in milliseconds. */
export const OPERATOR_REPLY_TIMEOUT_MS = 10_000;

const ACTION_FIELDS = ['workerId', 'runId', 'text', 'code', 'grantId', 'approvalId', 'decision'];
const QUERY_FIELDS = ['workerId', 'afterSequence', 'limit'];

export class OperatorChannel {
  #host;
  #pending = new PendingReplies();
  /** tabs a person's run_start / worker_attach claimed, until the daemon names the worker */
  #claims = new TabClaims();
  #count = 0;

  constructor(host) {
    this.#host = host;
  }

  /** A `ui.action` request: an `operator.action` (or a refusal that sends nothing). */
  action(replyId, request) {
    const actionId = `act-${this.#host.connectionId ?? 0}-${++this.#count}`;
    const message = { v: PROTOCOL_VERSION, type: 'operator.action', actionId, action: request?.action };
    if (CLAIM_ACTIONS.has(request?.action)) return this.#claimTab(replyId, message, request);
    for (const field of ACTION_FIELDS) if (request?.[field] !== undefined) message[field] = request[field];
    this.#ask(replyId, actionId, message);
  }

  /** A `ui.query` request: an `operator.query`. */
  query(replyId, request) {
    const queryId = `q-${this.#host.connectionId ?? 0}-${++this.#count}`;
    const message = { v: PROTOCOL_VERSION, type: 'operator.query', queryId, query: request?.query };
    for (const field of QUERY_FIELDS) if (request?.[field] !== undefined) message[field] = request[field];
    this.#ask(replyId, queryId, message);
  }

  /** `operator.result`: a claimed tab is bound first, then the caller hears, then held creates go on. */
  result(message) {
    const claim = this.#claims.settle(message.actionId);
    if (claim && message.ok && message.workerId) this.#host.bindTab(claim, message.workerId);
    const done = { ok: true };
    for (const field of ['runId', 'workerId']) if (message[field] !== undefined) done[field] = message[field];
    this.#answer(message.actionId, message.ok ? done : { ok: false, error: message.error ?? null });
    this.#release();
  }

  /** `operator.data`. */
  data(message) {
    const response = { ok: message.ok };
    if (message.data !== undefined) response.data = message.data;
    if (message.error !== undefined) response.error = message.error;
    this.#answer(message.queryId, response);
  }

  /** Whether `command` waits here (a `conversation.create` while a new-chat claim is unanswered). */
  holds(command) {
    if (command.kind !== 'conversation.create' || !this.#claims.holdsCreates()) return false;
    this.#claims.hold(command);
    return true;
  }

  /** Timer: unanswered requests get TIMEOUT; expired claims let held commands go on. */
  tick(now) {
    for (const replyId of this.#pending.expire(now)) {
      this.#host.reply(replyId, uiError('TIMEOUT', `no answer from the daemon within ${OPERATOR_REPLY_TIMEOUT_MS / 1000} s`));
    }
    if (this.#claims.expire(now)) this.#release();
  }

  /** The connection closed: every waiting caller gets OFFLINE, claims are given up. */
  dropped() {
    for (const replyId of this.#pending.takeAll()) this.#host.reply(replyId, uiError('OFFLINE', 'the daemon connection closed'));
    this.#claims.dropAll();
    this.#release();
  }

  /** When the next timeout falls, or null. */
  nextAt() {
    const times = [this.#pending.nextExpiryAt(), this.#claims.nextAt()].filter((t) => t !== null);
    return times.length ? Math.min(...times) : null;
  }

  #ask(replyId, correlationId, message) {
    if (!this.#host.live) {
      this.#host.reply(replyId, uiError('OFFLINE', 'not connected to the daemon'));
      return;
    }
    try {
      encodeMessage(message);
    } catch (e) {
      this.#host.reply(replyId, uiError('INVALID_ARGUMENT', e.message));
      return;
    }
    this.#pending.add(correlationId, replyId, this.#host.now + OPERATOR_REPLY_TIMEOUT_MS);
    this.#host.send(message);
  }

  /** run_start / worker_attach: the tab is claimed until the daemon names its worker. */
  #claimTab(replyId, message, request) {
    const tabId = request?.tabId;
    const { page, managedBy } = this.#host.tabOf(tabId);
    const asked = this.#claims.waitsFor(tabId)
      ? { error: { code: 'BUSY', message: 'this tab is being bound already' } }
      : claimRequest(request, page, managedBy);
    if (asked.error) return this.#host.reply(replyId, { ok: false, error: asked.error });
    if (this.#host.live) this.#claims.add(message.actionId, asked.claim, this.#host.now);
    this.#ask(replyId, message.actionId, { ...message, ...asked.fields });
  }

  /** conversation.create commands held for a new-chat claim go on once none waits. */
  #release() {
    for (const command of this.#claims.releasable()) this.#host.command(command);
  }

  #answer(correlationId, response) {
    const replyId = this.#pending.take(correlationId);
    if (replyId === null) this.#host.log('info', `an answer for ${correlationId} came after its caller gave up`);
    else this.#host.reply(replyId, response);
  }
}

export function uiError(code, message) {
  return { ok: false, error: { code, message } };
}
