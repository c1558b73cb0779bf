// storage.local for the background: the settings (created on first start from a test
// build's test-config.json or the defaults, with a generated executor id), and the
// executor's durable records (`journal`, `bindings`). Nothing else is stored there;
// `storage.session` (gone when the browser closes) keeps the watchdog's episodes across a
// stopped service worker or event page.

import { mergeSettings, newExecutorId } from '../core/settings.js';

/** Random bytes in a new executor id (`ext-` + twice as many hex digits). */
const EXECUTOR_ID_RANDOM_BYTES = 8;

/** A test build ships this file at the extension root: `{"settings": {...}}`. */
const TEST_CONFIG_PATH = 'test-config.json';

function randomHex(bytes) {
  return [...crypto.getRandomValues(new Uint8Array(bytes))].map((b) => b.toString(16).padStart(2, '0')).join('');
}

/** The test build's settings, or null when the file is absent or unreadable. */
async function testConfigSettings(api) {
  try {
    const response = await fetch(api.runtime.getURL(TEST_CONFIG_PATH));
    if (!response.ok) return null;
    const config = await response.json();
    return config && typeof config.settings === 'object' ? config.settings : null;
  } catch {
    return null;
  }
}

/**
 * The settings, creating them on first start: stored ones if any, else the test config's,
 * else the defaults; an executor id is generated once and kept.
 */
export async function loadSettings(api) {
  const { settings: stored } = await api.storage.local.get('settings');
  const source = stored ?? (await testConfigSettings(api)) ?? {};
  const { settings, errors } = mergeSettings(stored ?? {}, stored ? {} : source);
  for (const problem of Object.values(errors)) console.warn(`[orchestrator] ${TEST_CONFIG_PATH}: ${problem}`);
  if (!settings.executorId) settings.executorId = newExecutorId(randomHex(EXECUTOR_ID_RANDOM_BYTES));
  if (!stored || JSON.stringify(stored) !== JSON.stringify(settings)) await api.storage.local.set({ settings });
  return settings;
}

export async function saveSettings(api, settings) {
  await api.storage.local.set({ settings });
}

/** The executor's records as last persisted. */
export async function loadRecords(api) {
  const { journal = [], bindings = [] } = await api.storage.local.get(['journal', 'bindings']);
  return { journal, bindings };
}

/** Persists one record (`journal` or `bindings`). */
export async function saveRecord(api, key, value) {
  await api.storage.local.set({ [key]: value });
}

/** The watchdog's stored state (`storage.session` `watchdog`), or null. */
export async function loadWatchdog(api) {
  if (!api.storage.session) return null;
  const { watchdog = null } = await api.storage.session.get('watchdog');
  return watchdog;
}

export async function saveWatchdog(api, state) {
  await api.storage.session?.set({ watchdog: state });
}
