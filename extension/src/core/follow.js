// Following the leader among several daemon URLs (issue 32, docs/scale-out.md "Following the
// leader"), as pure rules mirroring the Rust clients' `address::follow`: the URLs in order,
// a leader a standby names tried first (at most LEADER_HOPS_MAX hops, never a URL already
// tried), and when none leads, one line saying what each said. A browser's socket API does
// not show the body of a refused upgrade, so a URL whose socket did not open is asked
// `GET /health` over HTTP (the background's probe); a standby answers every path with 503
// and `{"code":"NOT_LEADER","leader":"http://HOST:PORT/mcp"}` (`readProbe`).

/** The most leaders followed in one attempt (`address::follow::LEADER_HOPS_MAX`). */
export const LEADER_HOPS_MAX = 3;
/** The stable code of a standby's answer (the daemon's `standby_route.rs`). */
export const NOT_LEADER_CODE = 'NOT_LEADER';
/** The stable code of an attempt in which no daemon answered as the leader. */
export const NO_LEADER_CODE = 'NO_LEADER';
/** How long a probe of a URL whose socket did not open may take, in milliseconds. */
export const LEADER_PROBE_TIMEOUT_MS = 3_000;
/** The most characters of a probe's answer read (a standby's answer is a short JSON line). */
export const PROBE_BODY_CHARS_MAX = 4_096;
/** The path a probe asks: a standby answers it as every other, a leader with 200. */
export const PROBE_PATH = '/health';

/**
 * The leader a standby names in the body (text) of its answer: `''` when it names none (it
 * does not know the leader yet), null when the body is no `NOT_LEADER` answer.
 */
export function leaderNamed(body) {
  let answer;
  try {
    answer = JSON.parse(String(body ?? ''));
  } catch {
    return null;
  }
  if (answer?.code !== NOT_LEADER_CODE) return null;
  return typeof answer.leader === 'string' ? answer.leader.trim() : '';
}

/**
 * The executor endpoint of the daemon whose MCP URL is `mcpUrl`: `http://HOST:PORT/…`
 * becomes `ws://HOST:PORT/executor` (`https` becomes `wss`); null for anything else.
 */
export function executorUrlOf(mcpUrl) {
  const text = String(mcpUrl ?? '');
  const scheme = text.startsWith('http://') ? 'ws' : text.startsWith('https://') ? 'wss' : null;
  if (scheme === null) return null;
  const authority = text.slice(scheme === 'ws' ? 7 : 8).split(/[/?#]/)[0];
  if (authority === '' || /\s/.test(authority)) return null;
  return `${scheme}://${authority}/executor`;
}

/** Where to ask whether the daemon at executor URL `url` is a standby: `http(s)://HOST:PORT/health`. */
export function probeUrlOf(url) {
  const parsed = new URL(url);
  return `${parsed.protocol === 'wss:' ? 'https:' : 'http:'}//${parsed.host}${PROBE_PATH}`;
}

/**
 * One attempt to reach the leader: the URLs given, in order, with the leaders named on the
 * way tried first. `nextUrl()` until it gives null; each URL tried is then reported with
 * `notLeader` or `failed`; `noLeader()` says what each said.
 */
export class Follow {
  #given;
  #nextGiven = 0;
  #leader = null;
  #hops = 0;
  #tried = [];
  #said = [];
  #standbys = 0;

  constructor(given) {
    this.#given = [...given];
  }

  /** The next URL to try: the leader last named, else the next given not yet tried; null when all are tried. */
  nextUrl() {
    if (this.#leader !== null) {
      const leader = this.#leader;
      this.#leader = null;
      this.#tried.push(leader);
      return leader;
    }
    while (this.#nextGiven < this.#given.length) {
      const url = this.#given[this.#nextGiven];
      this.#nextGiven += 1;
      if (!this.#tried.includes(url)) {
        this.#tried.push(url);
        return url;
      }
    }
    return null;
  }

  /**
   * `url` answered `NOT_LEADER` naming `named` (as the standby wrote it); `follow` is the
   * URL to try for that leader, null when it cannot be reached from here. It is tried next
   * unless it was tried already or the hop limit is reached.
   */
  notLeader(url, named, follow) {
    this.#standbys += 1;
    if (named === '') {
      this.#said.push(`${url}: a standby that names no leader yet (${NOT_LEADER_CODE})`);
      return;
    }
    const secure = (u) => u.startsWith('https://') || u.startsWith('wss://');
    let why = '';
    if (follow === null) why = ' (not a URL the extension can follow)';
    // The token would go in clear to a leader a daemon reached over TLS named.
    else if (secure(url) && !secure(follow)) why = ' (in clear, named over TLS: not followed)';
    else if (this.#tried.includes(follow)) why = ' (already tried)';
    else if (this.#hops >= LEADER_HOPS_MAX) why = ' (hop limit reached)';
    else {
      this.#hops += 1;
      this.#leader = follow;
    }
    this.#said.push(`${url}: a standby naming the leader ${named} (${NOT_LEADER_CODE})${why}`);
  }

  /** `url` could not be used: `what` says why. */
  failed(url, what) {
    this.#said.push(`${url}: ${what}`);
  }

  /** How many URLs were tried. */
  get tried() {
    return this.#tried.length;
  }

  /** How many answers were a standby's. */
  get standbys() {
    return this.#standbys;
  }

  /** What each URL said, `URL: answer; URL: answer` (when `nextUrl` has nothing left). */
  noLeader() {
    return this.#said.join('; ');
  }
}

/**
 * A probe's answer for `url`, whose socket did not open (`socketDetail` says how), taken
 * into `follow`. `answer`: `{status, body}` (the body's text), `{error}` when nothing
 * answered, or null when no answer came in time.
 */
export function readProbe(follow, url, socketDetail, answer) {
  const named = typeof answer?.body === 'string' ? leaderNamed(answer.body) : null;
  if (named !== null) {
    follow.notLeader(url, named, named === '' ? null : executorUrlOf(named));
    return;
  }
  const heard = answer === null || answer === undefined ? `no answer at ${PROBE_PATH} in time`
    : typeof answer.status === 'number' ? `${PROBE_PATH} answered HTTP ${answer.status}` : `no answer at ${PROBE_PATH}`;
  follow.failed(url, `${socketDetail}; ${heard}`);
}
