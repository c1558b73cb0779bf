// Pairing with a daemon on this machine (docs/operator.md "Pairing"), as pure logic: where
// to look (`discoveryCandidates`), what a probe's answer means (`readDiscovery`), a typed
// code (`normalizeCode`), the exchange's request (`pairRequest`) and its answer
// (`readPairAnswer`), the daemon URLs stored after it (`pairedDaemonUrls`), and what the
// settings page says at each step (`pairingView`). The
// settings page does the fetching; nothing here touches the network or the clock.

/** The daemon's default port (its `--listen` default, the one the docs name). */
export const DAEMON_PORT_DEFAULT = 7411;
/** How long a probe or an exchange may take before it counts as no answer, in ms. */
export const PAIR_FETCH_TIMEOUT_MS = 2000;
/** What a daemon's discovery answer names as its product. */
export const PRODUCT = 'orchestrator';
/** Digits in a code (the daemon's `PAIR_CODE_DIGITS`). */
export const CODE_DIGITS = 8;

const LOOPBACK = new Set(['127.0.0.1', 'localhost', '[::1]']);

/**
 * Where to look for a daemon, in order: the configured daemon addresses that are on
 * loopback, then 127.0.0.1 at the default port. Each `{host, httpBase, daemonUrl}`:
 * `httpBase` for `/pair`, `daemonUrl` the executor endpoint to store on success.
 */
export function discoveryCandidates(settings) {
  const out = [];
  const add = (host, port) => {
    const authority = `${host}:${port}`;
    if (out.some((c) => c.host === authority)) return;
    out.push({ host: authority, httpBase: `http://${authority}`, daemonUrl: `ws://${authority}/executor` });
  };
  for (const configured of Array.isArray(settings?.daemonUrls) ? settings.daemonUrls : []) {
    if (typeof configured !== 'string' || !URL.canParse(configured)) continue;
    const url = new URL(configured);
    if (url.protocol === 'ws:' && LOOPBACK.has(url.hostname)) add(url.hostname, url.port || '80');
  }
  add('127.0.0.1', String(DAEMON_PORT_DEFAULT));
  return out;
}

/**
 * The daemon URLs to store after pairing with the daemon at `daemonUrl`: the configured
 * list when it names that daemon already (its standbys stay), else that daemon alone.
 */
export function pairedDaemonUrls(settings, daemonUrl) {
  const configured = Array.isArray(settings?.daemonUrls) ? settings.daemonUrls : [];
  return configured.includes(daemonUrl) ? [...configured] : [daemonUrl];
}

/** A probe's answer (`GET /pair`): `{found: true, version}` only from our daemon. */
export function readDiscovery(status, body) {
  if (status !== 200 || body?.product !== PRODUCT || body?.pairing !== true) return { found: false };
  return { found: true, version: typeof body.version === 'string' ? body.version : '' };
}

/** A typed code (`4821-7730`, `4821 7730`, `48217730`) as `4821-7730`, or null. */
export function normalizeCode(typed) {
  const digits = String(typed ?? '').replace(/[\s-]/g, '');
  if (digits.length !== CODE_DIGITS || !/^[0-9]+$/.test(digits)) return null;
  return `${digits.slice(0, 4)}-${digits.slice(4)}`;
}

/**
 * The exchange's fetch options. `text/plain` keeps it a simple request (no CORS
 * preflight); the daemon reads the body as JSON whatever its type.
 */
export function pairRequest(code) {
  return { method: 'POST', headers: { 'Content-Type': 'text/plain' }, body: JSON.stringify({ code }) };
}

const REFUSALS = {
  PAIR_CODE_WRONG: 'That code is not right. Check it, or run `orchestrator pair` for a new one.',
  PAIR_CODE_EXPIRED: 'That code has expired. Run `orchestrator pair` for a new one.',
  PAIR_CODE_USED: 'That code was used already (codes work once). Run `orchestrator pair` for a new one.',
  PAIR_CODE_WITHDRAWN: 'That code was withdrawn (too many wrong codes were tried, or newer ones replaced it). Run `orchestrator pair` for a new one.',
  PAIR_NOT_LOOPBACK: 'The daemon pairs with this machine only.',
  PAIR_ORIGIN: 'The daemon does not accept pairing from this page.',
};

/**
 * The exchange's answer: `{ok: true, token}` or `{ok: false, text}` in a person's words
 * (`retryAfterS`: the `Retry-After` header's seconds, for a 429).
 */
export function readPairAnswer(status, body, retryAfterS) {
  if (status === 200 && typeof body?.executorToken === 'string' && body.executorToken.length >= 16) {
    return { ok: true, token: body.executorToken, version: typeof body.version === 'string' ? body.version : '' };
  }
  if (status === 429 || body?.code === 'PAIR_RATE_LIMITED') {
    const wait = Number.isFinite(retryAfterS) && retryAfterS > 0 ? ` Try again in ${retryAfterS} s.` : ' Try again in a minute.';
    return { ok: false, text: `Too many tries.${wait}` };
  }
  const known = REFUSALS[body?.code];
  if (known) return { ok: false, text: known };
  return { ok: false, text: `The daemon refused (HTTP ${status}${body?.code ? `, ${body.code}` : ''}).` };
}

/**
 * What the pairing box shows: `{text, tone, canPair}` for `phase` `searching`, `found`
 * (with `host`), `missing`, `pairing`, `paired`, or `refused` (with `text`).
 */
export function pairingView(state) {
  switch (state?.phase) {
    case 'found':
      return { text: `Daemon found at ${state.host} — enter the pairing code.`, tone: 'info', canPair: true };
    case 'missing':
      return {
        text: 'No daemon answered on this machine. Start it with `orchestrator serve`, or paste the executor token below.',
        tone: 'warn',
        canPair: false,
      };
    case 'pairing':
      return { text: `Pairing with ${state.host}…`, tone: 'info', canPair: false };
    case 'paired':
      return { text: `Paired with ${state.host}. The extension connects with the new token.`, tone: 'ok', canPair: false };
    case 'refused':
      return { text: state.text, tone: 'error', canPair: true };
    default:
      return { text: 'Looking for a daemon on this machine…', tone: 'info', canPair: false };
  }
}
