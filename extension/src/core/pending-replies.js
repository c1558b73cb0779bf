// Operator requests waiting for the daemon: each correlation id (an operator.action's
// actionId, an operator.query's queryId) remembers whom to answer and until when.

export class PendingReplies {
  /** correlation id -> {replyId, untilMs} */
  #pending = new Map();

  add(correlationId, replyId, untilMs) {
    this.#pending.set(correlationId, { replyId, untilMs });
  }

  /** The reply id waiting for `correlationId` (now answered), or null. */
  take(correlationId) {
    const pending = this.#pending.get(correlationId);
    this.#pending.delete(correlationId);
    return pending?.replyId ?? null;
  }

  /** The reply ids whose time ran out by `now` (now given up). */
  expire(now) {
    const expired = [];
    for (const [id, pending] of this.#pending) {
      if (now >= pending.untilMs) {
        this.#pending.delete(id);
        expired.push(pending.replyId);
      }
    }
    return expired;
  }

  /** Every waiting reply id (all given up). */
  takeAll() {
    const all = [...this.#pending.values()].map((p) => p.replyId);
    this.#pending.clear();
    return all;
  }

  /** The earliest time a request runs out, or null. */
  nextExpiryAt() {
    let earliest = null;
    for (const { untilMs } of this.#pending.values()) if (earliest === null || untilMs < earliest) earliest = untilMs;
    return earliest;
  }
}
