// The extension's settings (storage.local `settings`): defaults, and validation of what is
// stored, shipped in a test build's test-config.json, or set from the settings page.

import { WATCHDOG_AFTER_MS_DEFAULT, WATCHDOG_AFTER_MS_RANGE } from './watchdog.js';

/** Concurrency and managed-tab bounds (the settings page offers the same ranges). */
export const CONCURRENCY_MAX_RANGE = [1, 16];
export const MANAGED_MAX_RANGE = [1, 64];
/** The developer app's name and its description line (as ChatGPT's `@` popover shows them). */
export const APP_NAME_CHARS_MAX = 80;
export const APP_DESCRIPTION_CHARS_MAX = 200;

export const SETTINGS_DEFAULTS = Object.freeze({
  daemonUrl: 'ws://127.0.0.1:7411/executor',
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

const CHECKS = {
  daemonUrl: (v) => typeof v === 'string' && URL.canParse(v) && ['ws:', 'wss:'].includes(new URL(v).protocol),
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
  daemonUrl: 'a ws:// or wss:// URL',
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

/** A new executor id: `ext-` and the given random hex digits. */
export function newExecutorId(randomHex) {
  return `ext-${randomHex}`;
}

/**
 * `patch` over `base`, field by field: known fields only, trimmed strings. Returns
 * `{settings, errors}` where `errors` maps each rejected field to what it should be; a
 * rejected field keeps its value from `base`.
 */
export function mergeSettings(base, patch) {
  const settings = { ...SETTINGS_DEFAULTS, ...pickValid(base) };
  const errors = {};
  for (const name of Object.keys(SETTINGS_DEFAULTS)) {
    if (!patch || patch[name] === undefined) continue;
    const value = typeof patch[name] === 'string' ? patch[name].trim() : patch[name];
    if (CHECKS[name](value)) settings[name] = value;
    else errors[name] = `${name}: expected ${PROBLEMS[name]}`;
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
