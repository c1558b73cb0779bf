// The extension's background (a service worker in Chromium, an event page in Firefox):
// thin glue that feeds browser events to the executor state machine (src/core/executor.js)
// and performs the effects it returns: the daemon WebSocket (and the probe of an address
// whose socket did not open: a standby naming the leader?), storage.local, tabs, the
// `page` port of content scripts, the operator UI's messages and the managed tabs' overlay,
// a browser notification when a worker starts waiting for a person to approve a tool call,
// and the watchdog's badge and notifications (src/core/watchdog.js: it only shows things).
// Listeners are registered synchronously (so events wake the worker); inputs that arrive
// before storage is loaded wait for it.

import { Executor } from '../core/executor.js';
import { mergeSettings } from '../core/settings.js';
import { restoreWatchdog, watch, worthSaving } from '../core/watchdog.js';
import { absentNotifications, approvalNotifications, dashboardHash, overlayView, stoppedNotifications, unknownPageNotifications } from '../ui/view.js';
import { loadRecords, loadSettings, loadWatchdog, saveRecord, saveSettings, saveWatchdog } from './storage.js';
import { Sockets } from './socket.js';
import { probeLeader } from './probe.js';

const api = globalThis.browser ?? globalThis.chrome;

/** The wake alarm: reconnects after the browser stopped an idle background. */
const WAKE_ALARM = 'orc-wake';
const WAKE_PERIOD_MINUTES = 0.5;

/** The port name content scripts connect with. */
const PAGE_PORT = 'page';

/** How long content scripts of managed tabs get to connect before they are injected again. */
const REINJECT_AFTER_MS = 2_000;

/** Inputs kept while the executor starts; past this many the oldest are dropped. */
const EARLY_INPUTS_MAX = 1_000;

let executor = null;
/** Inputs that came before the executor was ready: [name, args]. */
const early = [];
/** tabId -> the content script's port */
const ports = new Map();
/** replyId -> sendResponse of a ui.action / ui.query waiting for the daemon */
const replies = new Map();
let replyCount = 0;
/** The ids of the approval and stopped-run notifications shown and not yet cleared. */
const approvalShown = new Set();
const NOTIFICATION_ICON = 'src/ui/needs-you-48.png';
let timer = null;
/** The watchdog's state, the copy last stored, the badge last set (JSON) and its deadline's timer. */
let watchdog = null;
let watchdogSaved = null;
let badgeShown = null;
let watchdogTimer = null;
/** Effects run strictly in order: a persist completes before what follows it. */
let effectChain = Promise.resolve();

const sockets = new Sockets({
  opened: (id) => feed('socketOpened', id),
  message: (id, data) => feed('socketMessage', id, data),
  closed: (id, detail) => feed('socketClosed', id, detail),
});

const ready = start().catch((e) => console.error('[orchestrator] the background failed to start', e));

/** Gives one input to the executor (or keeps it until the executor is ready). */
function feed(input, ...args) {
  if (!executor) {
    early.push([input, args]);
    if (early.length > EARLY_INPUTS_MAX) early.shift();
    return;
  }
  perform(executor[input](Date.now(), ...args));
  look();
}

/**
 * Performs one input's effects in order. A failed persist abandons the rest of them: what
 * followed it (a result, a submission) must not happen without its record (fail closed:
 * the executor's timeouts then treat it as unanswered).
 */
function perform(effects) {
  effectChain = effectChain.then(async () => {
    for (const effect of effects) {
      try {
        await performOne(effect);
      } catch (e) {
        console.error(`[orchestrator] effect ${effect.kind} failed`, e);
        if (effect.kind === 'persist') return;
      }
    }
  });
}

async function performOne(effect) {
  switch (effect.kind) {
    case 'persist':
      return saveRecord(api, effect.key, effect.value);
    case 'openSocket':
      return sockets.open(effect.connectionId, effect.url);
    case 'closeSocket':
      return sockets.close(effect.connectionId, effect.reason);
    case 'send':
      return sockets.send(effect.connectionId, effect.text);
    case 'probe':
      // Not awaited: the effects after it do not wait for the network.
      probeLeader(effect.url).then((answer) => feed('probeAnswered', effect.probeId, answer));
      return undefined;
    case 'toPage':
      return ports.get(effect.tabId)?.postMessage(effect.message);
    case 'openTab':
      return openTab(effect);
    case 'overlay':
      return api.tabs.sendMessage(effect.tabId, { type: 'overlay.update', view: overlayOf(effect) }).catch(() => {});
    case 'uiChanged':
      notifyApprovals();
      return api.runtime.sendMessage({ type: 'ui.changed' }).catch(() => {});
    case 'uiReply':
      replies.get(effect.replyId)?.(effect.response);
      replies.delete(effect.replyId);
      return undefined;
    case 'log':
      return (console[effect.level] ?? console.log)(`[orchestrator] ${effect.message}`);
    case 'setTimer':
      clearTimeout(timer);
      timer = effect.atMs === null ? null : setTimeout(() => feed('tick'), Math.max(0, effect.atMs - Date.now()));
      return undefined;
    default:
      return console.warn(`[orchestrator] unknown effect ${effect.kind}`);
  }
}

function overlayOf({ workerSummary, connection, pageUnknown }) {
  try {
    return overlayView(workerSummary, connection, pageUnknown ? { state: 'unknown', detail: pageUnknown } : null, Date.now());
  } catch (e) {
    console.error('[orchestrator] overlay view failed', e);
    return null;
  }
}

/**
 * One notification per worker entering an approval hold, cleared when it lifts; clicking it
 * brings the worker's tab forward. The person approves in the tab: nothing here touches it.
 * Likewise one per managed page the adapter stopped recognizing (once per episode; clicking
 * it brings the tab forward), and one per run the daemon found stopped moving (its dead-man
 * layer); clicking that one opens the dashboard.
 */
function notifyApprovals() {
  if (!api.notifications) return;
  const state = executor?.uiState() ?? null;
  const summary = state?.summary ?? null;
  for (const { show, clear } of [approvalNotifications(summary, approvalShown), unknownPageNotifications(state?.unknownPages ?? {}, summary, approvalShown),
    stoppedNotifications(summary, approvalShown), absentNotifications(summary, approvalShown)]) {
    for (const id of clear) {
      approvalShown.delete(id);
      api.notifications.clear(id).catch(() => {});
    }
    for (const notice of show) {
      approvalShown.add(notice.id);
      showNotification(notice);
    }
  }
}

function showNotification({ id, title, message }) {
  api.notifications?.create(id, {
    type: 'basic', iconUrl: api.runtime.getURL(NOTIFICATION_ICON), title, message, priority: 2,
  }).catch((e) => console.warn('[orchestrator] could not show a notification', e));
}

/**
 * The watchdog looks after every input (the wake alarm brings one at least every 30 s) and
 * at its own next threshold, and its output is only shown: the toolbar badge and title, and
 * a notification raised or cleared per episode. Its state goes to storage.session when it
 * is worth it, so a stopped background does not start an episode over.
 */
function look() {
  if (!executor || !watchdog) return;
  const out = watch(watchdog, Date.now(), executor.watchdogSight(), executor.settings.watchdogAfterMs);
  watchdog = out.state;
  if (worthSaving(watchdogSaved, watchdog)) {
    watchdogSaved = watchdog;
    saveWatchdog(api, watchdog).catch((e) => console.warn('[orchestrator] could not store the watchdog', e));
  }
  showBadge(out.badge);
  for (const id of out.clear) api.notifications?.clear(id).catch(() => {});
  for (const notice of out.show) showNotification(notice);
  clearTimeout(watchdogTimer);
  watchdogTimer = out.wakeAtMs === null ? null : setTimeout(look, Math.max(0, out.wakeAtMs - Date.now()));
}

function showBadge(badge) {
  const key = JSON.stringify(badge);
  if (!api.action || key === badgeShown) return;
  badgeShown = key;
  const title = badge.title ?? api.runtime.getManifest().action?.default_title ?? '';
  Promise.all([
    api.action.setBadgeText({ text: badge.text }),
    badge.color ? api.action.setBadgeBackgroundColor({ color: badge.color }) : null,
    api.action.setTitle({ title }),
  ]).catch((e) => console.warn('[orchestrator] could not set the badge', e));
}

async function focusWorkerTab(notificationId) {
  const workerId = notificationId.slice(notificationId.indexOf(':') + 1);
  const tabs = executor?.uiState().tabs ?? {};
  const tabId = Object.keys(tabs).find((id) => tabs[id] === workerId);
  if (tabId === undefined) return;
  const tab = await api.tabs.update(Number(tabId), { active: true });
  await api.windows?.update(tab.windowId, { focused: true });
}

async function openTab({ requestId, url }) {
  try {
    const tab = await api.tabs.create({ url, active: false });
    feed('tabOpened', requestId, tab.id);
  } catch (e) {
    feed('tabOpenFailed', requestId, String(e?.message ?? e));
  }
}

async function start() {
  const settings = await loadSettings(api);
  const { journal, bindings } = await loadRecords(api);
  const openTabs = (await api.tabs.query({})).filter((t) => typeof t.url === 'string').map((t) => ({ tabId: t.id, url: t.url }));
  watchdog = restoreWatchdog(await loadWatchdog(api).catch(() => null));
  watchdogSaved = watchdog;
  executor = new Executor({ settings, journal, bindings, random: Math.random });
  perform(executor.start(Date.now(), openTabs));
  look();
  for (const [input, args] of early.splice(0)) feed(input, ...args);
  api.alarms.create(WAKE_ALARM, { periodInMinutes: WAKE_PERIOD_MINUTES });
  setTimeout(reinjectSilentTabs, REINJECT_AFTER_MS);
}

/**
 * After the extension was reloaded or updated, Chromium leaves the content scripts of open
 * tabs orphaned and does not inject new ones: managed tabs whose content script has not
 * connected by now get the manifest's content scripts again (each runs once per live
 * extension instance). Unmanaged tabs are never touched.
 */
async function reinjectSilentTabs() {
  const files = api.runtime.getManifest().content_scripts?.[0]?.js ?? [];
  for (const key of Object.keys(executor?.uiState().tabs ?? {})) {
    const tabId = Number(key);
    if (ports.has(tabId) || !files.length) continue;
    try {
      await api.scripting.executeScript({ target: { tabId }, files });
    } catch (e) {
      console.warn(`[orchestrator] could not reconnect managed tab ${tabId}`, e);
    }
  }
}

// ---- browser events

api.alarms.onAlarm.addListener((alarm) => {
  if (alarm.name === WAKE_ALARM) feed('wake');
});

api.tabs.onRemoved.addListener((tabId) => feed('tabClosed', tabId));

api.notifications?.onClicked.addListener((id) => {
  if (id.startsWith('orc-approval:') || id.startsWith('orc-page-unknown:')) focusWorkerTab(id).catch((e) => console.warn('[orchestrator] could not open the tab', e));
  if (id.startsWith('orc-stopped:') || id.startsWith('orc-absent:')) api.tabs.create({ url: api.runtime.getURL('src/ui/dashboard.html#needs-you') }).catch(() => {});
});

api.tabs.onUpdated.addListener((tabId, change) => {
  if (typeof change.url === 'string') feed('tabUpdated', tabId, change.url);
});

api.runtime.onConnect.addListener((port) => {
  const tabId = port.sender?.tab?.id;
  if (port.name !== PAGE_PORT || tabId === undefined || (port.sender.frameId ?? 0) !== 0) {
    port.disconnect();
    return;
  }
  ports.set(tabId, port);
  port.onMessage.addListener((message) => feed('pageMessage', tabId, message));
  port.onDisconnect.addListener(() => {
    if (ports.get(tabId) !== port) return;
    ports.delete(tabId);
    feed('pageDisconnected', tabId);
  });
});

api.runtime.onMessage.addListener((message, sender, sendResponse) => {
  if (sender.id !== api.runtime.id || typeof message?.type !== 'string' || !message.type.startsWith('ui.')) return false;
  ready.then(() => answerUi(message, sendResponse)).catch((e) => sendResponse({ ok: false, error: { code: 'INTERNAL', message: String(e) } }));
  return true;
});

/** The operator UI's requests (extension/README.md, "UI <-> background"). */
async function answerUi(message, sendResponse) {
  if (!executor) {
    sendResponse({ ok: false, error: { code: 'OFFLINE', message: 'the background did not start' } });
    return;
  }
  switch (message.type) {
    case 'ui.state':
      sendResponse(executor.uiState());
      return;
    case 'ui.action':
    case 'ui.query': {
      const replyId = ++replyCount;
      replies.set(replyId, sendResponse);
      feed(message.type === 'ui.action' ? 'uiAction' : 'uiQuery', replyId, message);
      return;
    }
    case 'ui.open':
      // A surface without tabs access (the overlay in a ChatGPT tab) opens the dashboard, at
      // one of its sections or cards (`#finished-run-3`); nothing else can be opened this way.
      await api.tabs.create({ url: api.runtime.getURL('src/ui/dashboard.html') + dashboardHash(message.hash) });
      sendResponse({ ok: true });
      return;
    case 'ui.settings.get':
      sendResponse({ ok: true, settings: executor.settings });
      return;
    case 'ui.settings.set': {
      const { settings, errors } = mergeSettings(executor.settings, message.settings);
      const problems = Object.values(errors);
      if (problems.length) {
        sendResponse({ ok: false, error: { code: 'INVALID_ARGUMENT', message: problems.join('; ') } });
        return;
      }
      await saveSettings(api, settings);
      feed('settingsChanged', settings);
      sendResponse({ ok: true, settings });
      return;
    }
    default:
      sendResponse({ ok: false, error: { code: 'INVALID_ARGUMENT', message: `unknown message ${message.type}` } });
  }
}
