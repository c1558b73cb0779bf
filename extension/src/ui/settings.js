// Settings / Advanced: reads and writes the connection settings and limits through the
// background (`ui.settings.get` / `ui.settings.set`), checked first with the same rules
// the background applies (src/core/settings.js), so a wrong field is named before saving.
// The daemon addresses are one per line (a leader and its standbys, tried in order). On
// top, pairing: a daemon on this machine is looked for (`GET /pair`) and a one-time
// code typed here is exchanged for the executor token (`POST /pair`, src/core/pairing.js),
// which is then saved as a pasted one is.
import { mergeSettings, appSelectionView, CONCURRENCY_MAX_RANGE, MANAGED_MAX_RANGE } from '../core/settings.js';
import {
  discoveryCandidates, readDiscovery, normalizeCode, pairRequest, readPairAnswer, pairingView, pairedDaemonUrls, PAIR_FETCH_TIMEOUT_MS,
} from '../core/pairing.js';
import { connectionView } from './view.js';
import { send, watchState, connectionBadge } from './dom.js';

const form = document.getElementById('form');
const status = document.getElementById('status');
const FIELDS = ['daemonUrls', 'token', 'executorId', 'appName', 'appDescription', 'concurrencyMax', 'managedMax'];
const NUMBERS = { concurrencyMax: CONCURRENCY_MAX_RANGE, managedMax: MANAGED_MAX_RANGE };
let stored = {};

function say(text, tone = 'info') {
  status.textContent = text;
  status.dataset.tone = tone;
}

/** A stored value as its field shows it: the daemon URLs one per line. */
const shown = (name, value) => (name === 'daemonUrls' && Array.isArray(value) ? value.join('\n') : value ?? '');

/** The form's values, numbers as numbers (an empty or odd one becomes NaN, which fails the check). */
function formValues() {
  return Object.fromEntries(FIELDS.map((name) => {
    const raw = form.elements[name].value;
    return [name, name in NUMBERS ? (raw.trim() === '' ? NaN : Number(raw)) : raw];
  }));
}

async function loadSettings() {
  const answer = await send({ type: 'ui.settings.get' });
  if (answer?.ok === false) return say('Could not read the settings from the background.', 'error');
  stored = answer?.settings ?? answer ?? {};
  for (const name of FIELDS) form.elements[name].value = shown(name, stored[name]);
  showAppSelection(stored);
}

// Whether workers' conversations get the app, said next to its fields (a warning when not).
function showAppSelection(settings) {
  const view = appSelectionView(settings);
  const line = document.getElementById('app-selection');
  line.textContent = view.text;
  line.dataset.tone = view.on ? 'info' : 'warn';
}

async function loadConnection() {
  const answer = await send({ type: 'ui.state' });
  const view = connectionView(answer?.connection);
  document.getElementById('connection').replaceChildren(connectionBadge(view));
  // When no daemon leads, what each address said (as the popup and the dashboard say it).
  document.getElementById('connection-hint').textContent = view.status === 'no_leader' ? view.hint : '';
}

form.addEventListener('submit', async (event) => {
  event.preventDefault();
  const { settings, errors } = mergeSettings(stored, formValues());
  for (const name of FIELDS) {
    form.elements[name].setAttribute('aria-invalid', errors[name] ? 'true' : 'false');
    const slot = document.getElementById(`${name}-error`);
    if (slot) slot.textContent = errors[name] ? `Expected ${errors[name].split(': expected ')[1]}.` : '';
  }
  const wrong = FIELDS.find((name) => errors[name]);
  if (wrong) {
    form.elements[wrong].focus();
    return say('Some fields need fixing.', 'error');
  }
  const answer = await send({ type: 'ui.settings.set', settings });
  if (answer?.ok === false) return say(`Not saved: ${answer.error?.message ?? answer.error?.code ?? 'the background refused'}.`, 'error');
  const moved = String(settings.daemonUrls) !== String(stored.daemonUrls);
  stored = settings;
  showAppSelection(stored);
  say('Saved. The extension reconnects with the new settings.');
  // A daemon at a new address is looked for there at once (pairing names what it finds).
  if (moved) {
    found = null;
    void discover();
  }
});

document.getElementById('reveal').addEventListener('click', (event) => {
  const shown = form.elements.token.type === 'text';
  form.elements.token.type = shown ? 'password' : 'text';
  event.currentTarget.setAttribute('aria-pressed', String(!shown));
  event.currentTarget.textContent = shown ? 'Show' : 'Hide';
});

// Pairing: the daemon found, the code typed, the token saved.
const pairForm = document.getElementById('pair');
let pairing = { phase: 'searching' };
let found = null; // the candidate that answered: {host, httpBase, daemonUrl}

function showPairing(state) {
  pairing = state;
  const view = pairingView(state);
  const line = document.getElementById('pair-status');
  line.textContent = view.text;
  line.dataset.tone = view.tone;
  document.getElementById('pair-submit').disabled = !view.canPair;
}

/** `fetch` that gives up after PAIR_FETCH_TIMEOUT_MS: `{status, body, retryAfterS}` or null. */
async function fetchJson(url, options = {}) {
  const abort = new AbortController();
  const timer = setTimeout(() => abort.abort(), PAIR_FETCH_TIMEOUT_MS);
  try {
    const response = await fetch(url, { ...options, signal: abort.signal, cache: 'no-store', credentials: 'omit' });
    const body = await response.json().catch(() => null);
    return { status: response.status, body, retryAfterS: Number(response.headers.get('Retry-After')) };
  } catch {
    return null;
  } finally {
    clearTimeout(timer);
  }
}

async function discover() {
  showPairing({ phase: 'searching' });
  for (const candidate of discoveryCandidates(stored)) {
    const answer = await fetchJson(`${candidate.httpBase}/pair`);
    if (answer && readDiscovery(answer.status, answer.body).found) {
      found = candidate;
      return showPairing({ phase: 'found', host: candidate.host });
    }
  }
  showPairing({ phase: 'missing' });
}

pairForm.addEventListener('submit', async (event) => {
  event.preventDefault();
  if (!found || !pairingView(pairing).canPair) return;
  const code = normalizeCode(pairForm.elements.code.value);
  if (!code) return showPairing({ phase: 'refused', text: 'A pairing code is 8 digits, like 1234-5678.' });
  showPairing({ phase: 'pairing', host: found.host });
  const answer = await fetchJson(`${found.httpBase}/pair`, pairRequest(code));
  if (!answer) return showPairing({ phase: 'refused', text: `The daemon at ${found.host} did not answer. Is it still running?` });
  const result = readPairAnswer(answer.status, answer.body, answer.retryAfterS);
  if (!result.ok) return showPairing({ phase: 'refused', text: result.text });
  const { settings } = mergeSettings(stored, { daemonUrls: pairedDaemonUrls(stored, found.daemonUrl), token: result.token });
  const saved = await send({ type: 'ui.settings.set', settings });
  if (saved?.ok === false) return showPairing({ phase: 'refused', text: 'Paired, but the settings could not be saved.' });
  stored = settings;
  pairForm.elements.code.value = '';
  for (const name of ['daemonUrls', 'token']) form.elements[name].value = shown(name, stored[name]);
  showPairing({ phase: 'paired', host: found.host });
});

for (const [name, [min, max]] of Object.entries(NUMBERS)) Object.assign(form.elements[name], { min, max });
loadSettings().then(discover);
watchState(loadConnection);
