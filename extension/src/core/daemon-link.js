// The daemon connection's lifecycle, without IO: which socket is current and its phase
// (opening -> hello-sent -> live), the open and welcome timeouts, the heartbeat schedule,
// and when to try again after a drop (jittered capped backoff, or the cap itself after a
// refusal such as UNAUTHORIZED so a wrong token never makes a fast loop).

import { reconnectDelayMs, RECONNECT_MAX_MS } from './backoff.js';

/** Heartbeat interval until the daemon's `welcome` says otherwise, in milliseconds. */
export const HEARTBEAT_MS_DEFAULT = 20_000;
/** The shortest heartbeat interval accepted from a `welcome`, in milliseconds. */
export const HEARTBEAT_MS_MIN = 1_000;
/** A socket that has not opened by then is abandoned, in milliseconds. */
export const SOCKET_OPEN_TIMEOUT_MS = 10_000;
/** A `hello` not answered by `welcome` by then closes the socket, in milliseconds. */
export const WELCOME_TIMEOUT_MS = 10_000;

export class DaemonLink {
  /** The current socket: null, or {id, phase: 'opening'|'hello-sent'|'live', untilMs, heartbeatMs, nextHeartbeatAtMs}. */
  #current = null;
  #ids = 0;
  #failures = 0;
  #nextAttemptAtMs = 0;
  #holdUntilMs = 0;

  /** `random`: returns a number in [0, 1), the reconnect jitter. */
  constructor(random) {
    this.random = random;
  }

  get connectionId() {
    return this.#current?.id ?? null;
  }

  /** Whether messages may be sent: `hello` went out (the daemon reads in order). */
  get canSend() {
    return this.#current !== null && this.#current.phase !== 'opening';
  }

  get live() {
    return this.#current?.phase === 'live';
  }

  get helloSent() {
    return this.#current?.phase === 'hello-sent';
  }

  isCurrent(connectionId) {
    return this.#current !== null && this.#current.id === connectionId;
  }

  /** A new socket id when no socket exists and the next attempt is due, else null. */
  openIfDue(now) {
    if (this.#current || now < this.#nextAttemptAtMs) return null;
    this.#current = { id: ++this.#ids, phase: 'opening', untilMs: now + SOCKET_OPEN_TIMEOUT_MS };
    return this.#current.id;
  }

  /** The background woke: without a socket, try now (unless held at the cap). */
  wake(now) {
    if (!this.#current) this.#nextAttemptAtMs = Math.max(now, this.#holdUntilMs);
  }

  /** New settings: forget the backoff and try now. */
  reset(now) {
    this.#failures = 0;
    this.#holdUntilMs = 0;
    this.#nextAttemptAtMs = now;
  }

  opened(now) {
    Object.assign(this.#current, { phase: 'hello-sent', untilMs: now + WELCOME_TIMEOUT_MS });
  }

  welcomed(now, heartbeatMs) {
    const interval = Math.max(HEARTBEAT_MS_MIN, heartbeatMs || HEARTBEAT_MS_DEFAULT);
    Object.assign(this.#current, { phase: 'live', heartbeatMs: interval, nextHeartbeatAtMs: now + interval });
    this.#failures = 0;
    this.#holdUntilMs = 0;
  }

  /** The next reconnect waits the longest backoff. */
  holdAtCap(now) {
    this.#holdUntilMs = now + RECONNECT_MAX_MS;
  }

  /** Why the current socket must be given up now (it did not open, no welcome), or null. */
  expired(now) {
    const c = this.#current;
    if (!c || c.phase === 'live' || now < c.untilMs) return null;
    return c.phase === 'opening' ? 'the socket did not open' : 'no welcome from the daemon';
  }

  /** Whether a heartbeat is due now (and if so, schedules the next). */
  heartbeatDue(now) {
    const c = this.#current;
    if (c?.phase !== 'live' || now < c.nextHeartbeatAtMs) return false;
    c.nextHeartbeatAtMs = now + c.heartbeatMs;
    return true;
  }

  /** The socket is gone: schedules the next attempt. */
  dropped(now) {
    this.#current = null;
    if (now < this.#holdUntilMs) {
      this.#nextAttemptAtMs = this.#holdUntilMs;
    } else {
      this.#failures += 1;
      this.#nextAttemptAtMs = now + reconnectDelayMs(this.#failures, this.random());
    }
  }

  /** When the link next needs a tick: a timeout, a heartbeat or a reconnect attempt. */
  nextWakeAt() {
    const c = this.#current;
    if (!c) return this.#nextAttemptAtMs;
    return c.phase === 'live' ? c.nextHeartbeatAtMs : c.untilMs;
  }
}
