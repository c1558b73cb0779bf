// The probe for the background: a daemon address whose WebSocket did not open is asked over
// HTTP (`GET http(s)://HOST:PORT/health`) whether it is a standby, because a browser's
// WebSocket does not show the status or body of a refused upgrade. A standby answers 503
// `NOT_LEADER` naming the leader, readable from here through its CORS header (the daemon's
// `standby_route.rs`); no credentials are sent. What it heard goes back to the executor as
// `probeAnswered` (src/core/follow.js reads it).

import { LEADER_PROBE_TIMEOUT_MS, PROBE_BODY_CHARS_MAX } from '../core/follow.js';

/** `{status, body}` (the body's text, cut short), or `{error}` when nothing answered in time. */
export async function probeLeader(url) {
  const abort = new AbortController();
  const timer = setTimeout(() => abort.abort(), LEADER_PROBE_TIMEOUT_MS);
  try {
    const response = await fetch(url, { signal: abort.signal, cache: 'no-store', credentials: 'omit', redirect: 'error' });
    const body = (await response.text()).slice(0, PROBE_BODY_CHARS_MAX);
    return { status: response.status, body };
  } catch (e) {
    return { error: String(e?.message ?? e) };
  } finally {
    clearTimeout(timer);
  }
}
