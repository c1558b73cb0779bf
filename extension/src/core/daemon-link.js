// The daemon connection's lifecycle, without IO: which socket is current and its phase
// (opening -> hello-sent -> live; or opening -> probing when it did not open), the open,
// probe and welcome timeouts, the heartbeat schedule and a silent daemon given up (one that
// answered heartbeats and then stopped: DAEMON_SILENCE_HEARTBEATS_MAX), and when to try again after a drop
// (jittered capped backoff, or the cap itself after a refusal such as UNAUTHORIZED so a
// wrong token never makes a fast loop). An attempt goes through the daemon URLs as
// follow.js says: a URL whose socket did not open is probed, and the next URL (a leader a
// standby named, else the next in the list) is opened at once; once none is left the
// attempt ends with the backoff. A socket that opened ends the attempt: after its drop the
// next one starts from the list again, so a failover's promoted standby is found.

import { reconnectDelayMs, RECONNECT_MAX_MS } from './backoff.js';
import { Follow, LEADER_PROBE_TIMEOUT_MS, probeUrlOf, readProbe } from './follow.js';

/** Heartbeat interval until the daemon's `welcome` says otherwise, in milliseconds. */
export const HEARTBEAT_MS_DEFAULT = 20_000;
/** The shortest heartbeat interval accepted from a `welcome`, in milliseconds. */
export const HEARTBEAT_MS_MIN = 1_000;
/** A socket that has not opened by then is abandoned, in milliseconds. */
export const SOCKET_OPEN_TIMEOUT_MS = 10_000;
/** A `hello` not answered by `welcome` by then closes the socket, in milliseconds. */
export const WELCOME_TIMEOUT_MS = 10_000;
/**
 * Heartbeat intervals a live daemon that answers heartbeats may stay silent before the
 * socket is given up: a daemon stopped without dying (SIGSTOP, a hung host) keeps the
 * socket open, and a browser's WebSocket cannot ping, so its silence is the only sign.
 * Armed only once the daemon answered a heartbeat on this socket (an older daemon never
 * answers, and is never left for its silence).
 */
export const DAEMON_SILENCE_HEARTBEATS_MAX = 3;

export class DaemonLink {
  /**
   * The current socket: null, or {id, url, phase: 'opening'|'probing'|'hello-sent'|'live', untilMs, detail,
   * heartbeatMs, nextHeartbeatAtMs, heardAtMs (the daemon's last message), echoes (it answers heartbeats)}.
   */
  #current = null;
  /** The attempt going through the URLs (a Follow), null between attempts. */
  #follow = null;
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

  /** Whether the current socket has not opened yet. */
  get opening() {
    return this.#current?.phase === 'opening';
  }

  /** Whether the current socket did not open and its address is being asked who leads. */
  get probing() {
    return this.#current?.phase === 'probing';
  }

  isCurrent(connectionId) {
    return this.#current !== null && this.#current.id === connectionId;
  }

  /**
   * A new socket `{id, url}` when no socket exists and the next attempt is due, else null.
   * `urls`: the daemon URLs, in order (an attempt starts with the first).
   */
  openIfDue(now, urls) {
    if (this.#current || now < this.#nextAttemptAtMs) return null;
    this.#follow ??= new Follow(urls);
    return this.#openNext(now);
  }

  #openNext(now) {
    const url = this.#follow.nextUrl();
    if (url === null) return null;
    this.#current = { id: ++this.#ids, url, phase: 'opening', untilMs: now + SOCKET_OPEN_TIMEOUT_MS };
    return { id: this.#current.id, url };
  }

  /**
   * The current socket did not open (`detail` says how): its address is asked whether it
   * is a standby. Returns the probe `{id, url}`: `url` the HTTP address to ask.
   */
  probe(now, detail) {
    Object.assign(this.#current, { phase: 'probing', detail, untilMs: now + LEADER_PROBE_TIMEOUT_MS });
    return { id: this.#current.id, url: probeUrlOf(this.#current.url) };
  }

  /**
   * The probe's answer (follow.js `readProbe`; null: none in time). Returns `{open: {id,
   * url}}`, the next URL to open now, or, when none is left, `{ended}`: the connection
   * status saying what each URL said, and the next attempt waits the backoff. The status is
   * `no_leader` when a standby answered or several URLs were tried, else `offline`.
   */
  probed(now, answer) {
    const follow = this.#follow;
    readProbe(follow, this.#current.url, this.#current.detail, answer);
    this.#current = null;
    const open = this.#openNext(now);
    if (open) return { open };
    this.dropped(now);
    return { ended: { status: follow.standbys > 0 || follow.tried > 1 ? 'no_leader' : 'offline', detail: follow.noLeader() } };
  }

  /** The background woke: without a socket, try now (unless held at the cap). */
  wake(now) {
    if (!this.#current) this.#nextAttemptAtMs = Math.max(now, this.#holdUntilMs);
  }

  /** New settings: forget the backoff and try now (the socket, and its attempt, were dropped). */
  reset(now) {
    this.#failures = 0;
    this.#holdUntilMs = 0;
    this.#nextAttemptAtMs = now;
  }

  /** The socket opened: the attempt ends here (after a drop the next starts from the list). */
  opened(now) {
    this.#follow = null;
    Object.assign(this.#current, { phase: 'hello-sent', untilMs: now + WELCOME_TIMEOUT_MS });
  }

  welcomed(now, heartbeatMs) {
    const interval = Math.max(HEARTBEAT_MS_MIN, heartbeatMs || HEARTBEAT_MS_DEFAULT);
    Object.assign(this.#current, {
      phase: 'live', heartbeatMs: interval, nextHeartbeatAtMs: now + interval, heardAtMs: now, echoes: false,
    });
    this.#failures = 0;
    this.#holdUntilMs = 0;
  }

  /** The next reconnect waits the longest backoff. */
  holdAtCap(now) {
    this.#holdUntilMs = now + RECONNECT_MAX_MS;
  }

  /** The daemon sent a message on the current socket (`echo`: the answer to a heartbeat). */
  heard(now, echo) {
    const c = this.#current;
    if (c?.phase !== 'live') return;
    c.heardAtMs = now;
    if (echo) c.echoes = true;
  }

  /** When a live daemon that answers heartbeats has been silent too long, or never. */
  #silentAt(c) {
    return c.echoes ? c.heardAtMs + DAEMON_SILENCE_HEARTBEATS_MAX * c.heartbeatMs : Infinity;
  }

  /** Why the current socket must be given up now (it did not open, its probe, no welcome, a silent daemon), or null. */
  expired(now) {
    const c = this.#current;
    if (c?.phase === 'live' && now >= this.#silentAt(c)) {
      return `the daemon sent nothing for ${Math.round((now - c.heardAtMs) / 1000)} s, not even an answer to a heartbeat (stopped or hung): leaving it`;
    }
    if (!c || c.phase === 'live' || now < c.untilMs) return null;
    return { opening: 'the socket did not open in time', probing: 'no answer to the probe' }[c.phase] ?? 'no welcome from the daemon';
  }

  /** Whether a heartbeat is due now (and if so, schedules the next). */
  heartbeatDue(now) {
    const c = this.#current;
    if (c?.phase !== 'live' || now < c.nextHeartbeatAtMs) return false;
    c.nextHeartbeatAtMs = now + c.heartbeatMs;
    return true;
  }

  /** The socket is gone: ends the attempt and schedules the next. */
  dropped(now) {
    this.#current = null;
    this.#follow = null;
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
    return c.phase === 'live' ? Math.min(c.nextHeartbeatAtMs, this.#silentAt(c)) : c.untilMs;
  }
}
