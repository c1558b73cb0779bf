// The extension's settings (storage.local `settings`): defaults, and validation of what is
// stored, shipped in a test build's test-config.json, or set from the settings page.
// `daemonUrls` lists the daemons to try, in order (a leader and its standbys: follow.js);
// settings from before it held one `daemonUrl`, which is still read as a list of one.

import { WATCHDOG_AFTER_MS_DEFAULT, WATCHDOG_AFTER_MS_RANGE } from './watchdog.js';

/** The most daemon URLs (a leader and its standbys; the daemon's own hop limit is 3). */
export const DAEMON_URLS_MAX = 8;
/** Concurrency and managed-tab bounds (the settings page offers the same ranges). */
export const CONCURRENCY_MAX_RANGE = [1, 16];
export const MANAGED_MAX_RANGE = [1, 64];
/** The developer app's name and its description line (as ChatGPT's `@` popover shows them). */
export const APP_NAME_CHARS_MAX = 80;
export const APP_DESCRIPTION_CHARS_MAX = 200;

export const SETTINGS_DEFAULTS = Object.freeze({
  daemonUrls: Object.freeze(['ws://127.0.0.1:7411/executor']),
  token: '',
  executorId: '',
  concurrencyMax: 4,
  managedMax: 8,
  chatBaseUrl: 'https://chatgpt.com/',
  // The orchestrator's app as installed in ChatGPT (Developer mode). Empty: app selection is
  // off, nothing is chosen before a send, and the surfaces warn that workers cannot call the
  // orchestrator's tools from their conversations (appSelectionView).
  appName: '',
  // Optional: the app row's description line, to tell the app's row from other rows naming it.
  appDescription: '',
  // How long the daemon is unreachable (with managed tabs), or every managed page shows an
  // error, before the watchdog's badge and notification (core/watchdog.js). Not on the
  // settings page; a test build lowers it.
  watchdogAfterMs: WATCHDOG_AFTER_MS_DEFAULT,
});

// One line of text: no control characters (a name or a description as the popover shows it).
const oneLine = (v, charsMax) => typeof v === 'string' && v.length <= charsMax && !/[\u0000-\u001f\u007f]/.test(v);

const isDaemonUrl = (v) => typeof v === 'string' && URL.canParse(v) && ['ws:', 'wss:'].includes(new URL(v).protocol);

const CHECKS = {
  daemonUrls: (v) => Array.isArray(v) && v.length >= 1 && v.length <= DAEMON_URLS_MAX && v.every(isDaemonUrl)
    && new Set(v).size === v.length,
  token: (v) => typeof v === 'string' && v.length <= 4096,
  executorId: (v) => typeof v === 'string' && /^[\x21-\x7e]{1,128}$/.test(v),
  concurrencyMax: (v) => Number.isInteger(v) && v >= CONCURRENCY_MAX_RANGE[0] && v <= CONCURRENCY_MAX_RANGE[1],
  managedMax: (v) => Number.isInteger(v) && v >= MANAGED_MAX_RANGE[0] && v <= MANAGED_MAX_RANGE[1],
  chatBaseUrl: (v) => typeof v === 'string' && URL.canParse(v) && ['http:', 'https:'].includes(new URL(v).protocol),
  appName: (v) => oneLine(v, APP_NAME_CHARS_MAX) && !v.startsWith('@'),
  appDescription: (v) => oneLine(v, APP_DESCRIPTION_CHARS_MAX),
  watchdogAfterMs: (v) => Number.isInteger(v) && v >= WATCHDOG_AFTER_MS_RANGE[0] && v <= WATCHDOG_AFTER_MS_RANGE[1],
};

const PROBLEMS = {
  daemonUrls: `1 to ${DAEMON_URLS_MAX} different ws:// or wss:// URLs, one per line`,
  token: 'a string of at most 4096 characters',
  executorId: '1 to 128 printable ASCII characters without spaces',
  concurrencyMax: `a whole number from ${CONCURRENCY_MAX_RANGE[0]} to ${CONCURRENCY_MAX_RANGE[1]}`,
  managedMax: `a whole number from ${MANAGED_MAX_RANGE[0]} to ${MANAGED_MAX_RANGE[1]}`,
  chatBaseUrl: 'an http:// or https:// URL',
  appName: `the app's name as ChatGPT shows it (without @), one line of at most ${APP_NAME_CHARS_MAX} characters, or empty for no app`,
  appDescription: `one line of at most ${APP_DESCRIPTION_CHARS_MAX} characters, or empty`,
  watchdogAfterMs: `a whole number of milliseconds from ${WATCHDOG_AFTER_MS_RANGE[0]} to ${WATCHDOG_AFTER_MS_RANGE[1]}`,
};

/**
 * The app the extension chooses before the first send of every page load: `{name,
 * description}`, or null when app selection is off (no app name set).
 */
export function appOf(settings) {
  const name = settings?.appName ?? '';
  return name === '' ? null : { name, description: settings.appDescription ?? '' };
}

/**
 * What the surfaces say about app selection: `{on, text}`. Off is allowed (a daemon used
 * without ChatGPT tools), but workers then cannot call the orchestrator, so it is a warning.
 */
export function appSelectionView(settings) {
  const app = appOf(settings);
  return app === null
    ? { on: false, text: 'No app set: worker conversations cannot call the orchestrator\'s tools. Set the app\'s name in Settings.' }
    : { on: true, text: `Chooses ${app.name} in every worker conversation before its first message` };
}

/**
 * The daemon URLs as given: a list, or text with one per line (commas and spaces also
 * separate them: a list typed with commas would otherwise parse as one odd URL), or a
 * stored or configured `daemonUrl` from before the list; each trimmed.
 */
export function daemonUrlsOf(value) {
  const list = typeof value === 'string' ? value.split(/[\s,]+/) : Array.isArray(value) ? value : [value];
  return list.map((url) => (typeof url === 'string' ? url.trim() : url)).filter((url) => url !== '');
}

/** The fields of `settings` with a stored or configured `daemonUrl` read as `daemonUrls` (when that is absent). */
function withDaemonUrls(settings) {
  if (!settings || settings.daemonUrl === undefined || settings.daemonUrls !== undefined) return settings;
  const { daemonUrl, ...rest } = settings;
  return { ...rest, daemonUrls: daemonUrlsOf(daemonUrl) };
}

/** Which of the daemon URLs is wrong, said after what is expected: ` (http://x is not one)`. */
function daemonUrlsProblem(list) {
  const bad = list.find((url) => !isDaemonUrl(url));
  if (bad !== undefined) return ` (${String(bad)} is not one)`;
  const twice = list.find((url, i) => list.indexOf(url) !== i);
  if (twice !== undefined) return ` (${twice} is there twice)`;
  return ` (${list.length} given)`;
}

/** A new executor id: `ext-` and the given random hex digits. */
export function newExecutorId(randomHex) {
  return `ext-${randomHex}`;
}

/**
 * `patch` over `base`, field by field: known fields only, trimmed strings (a stored or
 * configured `daemonUrl` read as `daemonUrls`). Returns
 * `{settings, errors}` where `errors` maps each rejected field to what it should be; a
 * rejected field keeps its value from `base`.
 */
export function mergeSettings(base, patch) {
  const settings = { ...SETTINGS_DEFAULTS, ...pickValid(withDaemonUrls(base)) };
  const errors = {};
  const fields = withDaemonUrls(patch);
  for (const name of Object.keys(SETTINGS_DEFAULTS)) {
    if (!fields || fields[name] === undefined) continue;
    const value = name === 'daemonUrls' ? daemonUrlsOf(fields[name]) : typeof fields[name] === 'string' ? fields[name].trim() : fields[name];
    if (CHECKS[name](value)) settings[name] = value;
    else errors[name] = `${name}: expected ${PROBLEMS[name]}${name === 'daemonUrls' ? daemonUrlsProblem(value) : ''}`;
  }
  return { settings, errors };
}

/** The valid known fields of stored settings (anything else is dropped). */
function pickValid(stored) {
  const out = {};
  for (const name of Object.keys(SETTINGS_DEFAULTS)) {
    if (stored && stored[name] !== undefined && CHECKS[name](stored[name])) out[name] = stored[name];
  }
  return out;
}
