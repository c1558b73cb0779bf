// The extension's watchdog (src/core/watchdog.js, issue 19): thresholds, one notification
// per episode, re-arming, no alarm without managed tabs, pages that recover, gaps in
// observation, restarts through storage.session, determinism, and that nothing it returns
// can type or reach the daemon. Time is an argument throughout.

import test from 'node:test';
import assert from 'node:assert/strict';
import * as watchdogModule from '../../src/core/watchdog.js';
import {
  watch, initialWatchdog, restoreWatchdog, worthSaving, durationText,
  WATCHDOG_AFTER_MS_DEFAULT, OBSERVATION_GAP_MS_MAX, WATCHDOG_SAVE_MS, NOTICE_DAEMON, NOTICE_PAGES,
} from '../../src/core/watchdog.js';
import { mergeSettings, SETTINGS_DEFAULTS } from '../../src/core/settings.js';
import { Rig, T0, CONVERSATION, facts, idleFacts } from './executor-harness.mjs';

const AFTER = WATCHDOG_AFTER_MS_DEFAULT;
const STEP = 30_000; // the wake alarm's period
const MIN = 60_000;

const offline = { status: 'offline', detail: 'connection refused' };
const live = { status: 'live' };
const idle = (workerId) => ({ workerId, state: 'idle' });
const failed = (workerId, errorKind = 'delivery_timeout', untilMs) => ({ workerId, state: 'error', errorKind, untilMs });
const tabs = (n, page = idle) => Array.from({ length: n }, (_, i) => page(`wrk-${i + 1}`));

/** Feeds `sight(t)` every STEP from `fromMs` through `toMs`; returns every output, and the last state. */
function run(state, fromMs, toMs, sight, afterMs = AFTER) {
  const outs = [];
  for (let t = fromMs; t <= toMs; t += STEP) {
    const out = watch(state, t, sight(t), afterMs);
    outs.push({ t, ...out });
    state = out.state;
  }
  return { outs, state, last: outs.at(-1) };
}

const shown = (outs) => outs.flatMap((o) => o.show.map((n) => ({ t: o.t, ...n })));
const cleared = (outs) => outs.flatMap((o) => o.clear.map((id) => ({ t: o.t, id })));

test('limits: 5 minutes by default, a gap of 2 minutes, the setting validated', () => {
  assert.equal(WATCHDOG_AFTER_MS_DEFAULT, 300_000);
  assert.equal(OBSERVATION_GAP_MS_MAX, 120_000);
  assert.ok(WATCHDOG_SAVE_MS < OBSERVATION_GAP_MS_MAX / 4);
  assert.equal(SETTINGS_DEFAULTS.watchdogAfterMs, AFTER);
  assert.equal(mergeSettings(SETTINGS_DEFAULTS, { watchdogAfterMs: 2_000 }).settings.watchdogAfterMs, 2_000);
  for (const bad of [999, 86_400_001, 1.5, '300000', null]) {
    assert.ok(mergeSettings(SETTINGS_DEFAULTS, { watchdogAfterMs: bad }).errors.watchdogAfterMs, String(bad));
  }
});

test('nothing while zero managed tabs, however long the daemon is away', () => {
  const { outs } = run(initialWatchdog(), T0, T0 + 3 * 3_600_000, () => ({ connection: offline, pages: [] }));
  assert.ok(outs.every((o) => o.show.length === 0 && o.clear.length === 0 && o.badge.text === '' && o.wakeAtMs === null));
});

test('daemon unreachable with managed tabs: nothing before the threshold, then one badge and one notification', () => {
  const sight = () => ({ connection: offline, pages: tabs(3) });
  const before = run(initialWatchdog(), T0, T0 + AFTER - STEP, sight);
  assert.ok(before.outs.every((o) => o.show.length === 0 && o.badge.text === ''));
  assert.equal(before.last.wakeAtMs, T0 + AFTER, 'the background is told when the threshold falls');
  const at = watch(before.state, T0 + AFTER, sight(), AFTER);
  assert.deepEqual(at.show.map((n) => n.id), [NOTICE_DAEMON]);
  assert.equal(at.show[0].title, 'Orchestrator daemon unreachable');
  assert.equal(at.show[0].message,
    'The orchestrator daemon has been unreachable for 5 min while 3 ChatGPT tabs are managed. '
    + 'Nothing is typed until it is back. Check `orchestrator doctor`.');
  assert.equal(at.badge.text, '!');
  assert.match(at.badge.title, /unreachable for 5 min/);
  assert.equal(at.wakeAtMs, null, 'a fired episode waits for no threshold');
});

test('one notification per episode: an hour offline shows one, and the badge title keeps counting', () => {
  const { outs, last } = run(initialWatchdog(), T0, T0 + 65 * MIN, () => ({ connection: offline, pages: tabs(1) }));
  assert.deepEqual(shown(outs).map((n) => [n.t - T0, n.id]), [[AFTER, NOTICE_DAEMON]]);
  assert.match(shown(outs)[0].message, /while 1 ChatGPT tab is managed\./);
  assert.match(last.badge.title, /unreachable for 65 min/);
  assert.ok(outs.filter((o) => o.t - T0 >= AFTER).every((o) => o.badge.text === '!'));
});

test('the daemon coming back clears the badge and the notification, and re-arms the next episode', () => {
  let state = run(initialWatchdog(), T0, T0 + 6 * MIN, () => ({ connection: offline, pages: tabs(2) })).state;
  const back = watch(state, T0 + 6 * MIN + STEP, { connection: live, pages: tabs(2) }, AFTER);
  assert.deepEqual(back.clear, [NOTICE_DAEMON]);
  assert.deepEqual(back.badge, { text: '', color: null, title: null });
  state = back.state;
  // A short drop (a daemon restart) says nothing; a long one is a new episode with its own notification.
  const blip = run(state, T0 + 7 * MIN, T0 + 9 * MIN, () => ({ connection: { status: 'connecting' }, pages: tabs(2) }));
  assert.equal(shown(blip.outs).length, 0);
  state = watch(blip.state, T0 + 9 * MIN + STEP, { connection: live, pages: tabs(2) }, AFTER).state;
  const again = run(state, T0 + 10 * MIN, T0 + 20 * MIN, () => ({ connection: offline, pages: tabs(2) }));
  assert.deepEqual(shown(again.outs).map((n) => [n.t - T0, n.id]), [[15 * MIN, NOTICE_DAEMON]]);
});

test('the threshold runs from when tabs are managed, the text says how long the daemon has been away', () => {
  const sight = (t) => ({ connection: offline, pages: t - T0 >= 10 * MIN ? tabs(2) : [] });
  const { outs } = run(initialWatchdog(), T0, T0 + 20 * MIN, sight);
  const notices = shown(outs);
  assert.deepEqual(notices.map((n) => n.t - T0), [15 * MIN]);
  assert.match(notices[0].message, /unreachable for 15 min while 2 ChatGPT tabs are managed/);
});

test('the last managed tab closing ends the episode', () => {
  const state = run(initialWatchdog(), T0, T0 + 6 * MIN, () => ({ connection: offline, pages: tabs(1) })).state;
  const closed = watch(state, T0 + 6 * MIN + STEP, { connection: offline, pages: [] }, AFTER);
  assert.deepEqual(closed.clear, [NOTICE_DAEMON]);
  assert.equal(closed.badge.text, '');
});

test('a refused token and a missing token say what to do about them', () => {
  const refused = run(initialWatchdog(), T0, T0 + AFTER, () => ({ connection: { status: 'unauthorized', detail: 'bad token' }, pages: tabs(1) }));
  const [notice] = shown(refused.outs);
  assert.equal(notice.title, 'Orchestrator daemon refuses this extension');
  assert.match(notice.message, /refused this extension's executor token for 5 min while 1 ChatGPT tab is managed\. Nothing is typed until it is accepted/);
  assert.match(notice.message, /Settings/);
  const missing = run(initialWatchdog(), T0, T0 + AFTER, () => ({ connection: { status: 'token_missing' }, pages: tabs(4) }));
  assert.match(shown(missing.outs)[0].message, /^No executor token is set, so the extension has not reached the orchestrator daemon for 5 min while 4 ChatGPT tabs/);
});

test('every managed page erroring for the threshold: one notice naming the errors, while the daemon is live', () => {
  const pages = [failed('wrk-1'), failed('wrk-2', 'conversation_full'), failed('wrk-3')];
  const { outs, last } = run(initialWatchdog(), T0, T0 + 30 * MIN, () => ({ connection: live, pages }));
  const notices = shown(outs);
  assert.deepEqual(notices.map((n) => [n.t - T0, n.id]), [[AFTER, NOTICE_PAGES]]);
  assert.equal(notices[0].title, 'Every managed ChatGPT tab shows an error');
  assert.equal(notices[0].message,
    'All 3 managed ChatGPT tabs have shown an error for 5 min (conversation full: 1, delivery timeout: 2). '
    + 'The extension does not retry or type on its own: the orchestrator daemon decides what happens next. '
    + 'Look at the tabs, and at the run in the dashboard.');
  assert.equal(last.badge.text, '!');
  assert.match(last.badge.title, /for 30 min/);
});

test('one page still working means no page episode; a page recovering clears it', () => {
  const mixed = run(initialWatchdog(), T0, T0 + 30 * MIN, () => ({ connection: live, pages: [failed('wrk-1'), idle('wrk-2')] }));
  assert.equal(shown(mixed.outs).length, 0);
  assert.ok(mixed.outs.every((o) => o.badge.text === ''));
  const fired = run(initialWatchdog(), T0, T0 + 6 * MIN, () => ({ connection: live, pages: [failed('wrk-1'), failed('wrk-2')] }));
  const recovered = watch(fired.state, T0 + 6 * MIN + STEP, { connection: live, pages: [idle('wrk-1'), failed('wrk-2')] }, AFTER);
  assert.deepEqual(recovered.clear, [NOTICE_PAGES]);
  assert.equal(recovered.badge.text, '');
  assert.equal(recovered.wakeAtMs, null);
  // Never observed (a new chat's tab) is not an error either.
  const fresh = run(initialWatchdog(), T0, T0 + 30 * MIN, () => ({ connection: live, pages: [{ workerId: 'wrk-1', state: null }] }));
  assert.equal(shown(fresh.outs).length, 0);
});

test('a limit that names its reset time is waiting, not stuck, until that time', () => {
  const resetAt = T0 + 20 * MIN;
  const { outs } = run(initialWatchdog(), T0, T0 + 40 * MIN, () => ({ connection: live, pages: [failed('wrk-1', 'usage_limit', resetAt)] }));
  assert.deepEqual(shown(outs).map((n) => n.t - T0), [25 * MIN]);
  assert.match(shown(outs)[0].message, /^The managed ChatGPT tab has shown an error for 5 min \(usage limit: 1\)/);
});

test('an unreachable daemon and erroring pages are two episodes, each with its own notice', () => {
  const { outs, last } = run(initialWatchdog(), T0, T0 + 10 * MIN, () => ({ connection: offline, pages: [failed('wrk-1')] }));
  assert.deepEqual(shown(outs).map((n) => n.id), [NOTICE_DAEMON, NOTICE_PAGES]);
  assert.equal(last.badge.title.split('\n\n').length, 2);
  const back = watch(last.state, T0 + 10 * MIN + STEP, { connection: live, pages: [failed('wrk-1')] }, AFTER);
  assert.deepEqual(back.clear, [NOTICE_DAEMON]);
  assert.equal(back.badge.text, '!', 'the pages still show errors');
});

test('time not observed (a sleeping computer, a clock set back) does not count toward a threshold', () => {
  const sight = () => ({ connection: offline, pages: tabs(1) });
  let state = run(initialWatchdog(), T0, T0 + 4 * MIN, sight).state;
  const woke = watch(state, T0 + 4 * 3_600_000, sight(), AFTER);
  assert.equal(woke.show.length, 0, 'hours asleep are not hours unreachable');
  assert.equal(woke.wakeAtMs, T0 + 4 * 3_600_000 + AFTER);
  state = woke.state;
  const back = watch(state, T0 + MIN, sight(), AFTER);
  assert.equal(back.show.length, 0);
  assert.equal(back.wakeAtMs, T0 + MIN + AFTER);
  // Within the gap the time counts.
  state = run(initialWatchdog(), T0, T0 + 4 * MIN, sight).state;
  const late = watch(state, T0 + 4 * MIN + OBSERVATION_GAP_MS_MAX, sight(), AFTER);
  assert.deepEqual(late.show.map((n) => n.id), [NOTICE_DAEMON]);
});

test('a fired episode survives a gap: no second notification, its start kept', () => {
  const sight = () => ({ connection: offline, pages: tabs(1) });
  const state = run(initialWatchdog(), T0, T0 + 6 * MIN, sight).state;
  const later = watch(state, T0 + 3 * 3_600_000, sight(), AFTER);
  assert.deepEqual(later.show, []);
  assert.equal(later.badge.text, '!');
  assert.match(later.badge.title, /unreachable for 3 h 0 min/);
});

test('a fired episode survives the clock being set back: neither cleared nor shown again', () => {
  const sight = () => ({ connection: offline, pages: [failed('wrk-1')] });
  const state = run(initialWatchdog(), T0, T0 + 6 * MIN, sight).state;
  const { outs } = run(state, T0 - 3_600_000, T0 - 3_600_000 + 20 * MIN, sight);
  assert.deepEqual(shown(outs), []);
  assert.deepEqual(cleared(outs), []);
  assert.ok(outs.every((o) => o.badge.text === '!'));
});

test('a restarted background (state through storage.session) continues the episode and never notifies twice', () => {
  const sight = () => ({ connection: offline, pages: tabs(2) });
  const first = run(initialWatchdog(), T0, T0 + 3 * MIN, sight);
  const restored = restoreWatchdog(JSON.parse(JSON.stringify(first.state)));
  assert.deepEqual(restored, first.state);
  const second = run(restored, T0 + 3 * MIN + STEP, T0 + 8 * MIN, sight);
  assert.deepEqual(shown(second.outs).map((n) => n.t - T0), [AFTER]);
  const third = run(restoreWatchdog(JSON.parse(JSON.stringify(second.state))), T0 + 8 * MIN + STEP, T0 + 12 * MIN, sight);
  assert.deepEqual(shown(third.outs), []);
  assert.ok(third.outs.every((o) => o.badge.text === '!'));
});

test('a damaged stored state is the initial one', () => {
  for (const bad of [null, 'x', {}, { ...initialWatchdog(), seenAtMs: 'soon' }, { ...initialWatchdog(), daemonFired: 1 }]) {
    assert.deepEqual(restoreWatchdog(bad), initialWatchdog(), JSON.stringify(bad));
  }
  assert.deepEqual(Object.keys(restoreWatchdog({ ...initialWatchdog(), extra: 1 })).sort(), Object.keys(initialWatchdog()).sort());
});

test('worth saving: when an episode changes, or the stored observation is stale', () => {
  const a = run(initialWatchdog(), T0, T0, () => ({ connection: offline, pages: tabs(1) })).state;
  assert.equal(worthSaving(null, a), true);
  assert.equal(worthSaving(initialWatchdog(), a), true);
  assert.equal(worthSaving(a, { ...a, seenAtMs: a.seenAtMs + WATCHDOG_SAVE_MS - 1 }), false);
  assert.equal(worthSaving(a, { ...a, seenAtMs: a.seenAtMs + WATCHDOG_SAVE_MS }), true);
  assert.equal(worthSaving(a, { ...a, seenAtMs: a.seenAtMs + 1, daemonFired: true }), true);
  assert.equal(worthSaving(a, { ...a, seenAtMs: a.seenAtMs + 1, offlineSinceMs: null }), true);
});

test('durations read as a person would say them', () => {
  assert.equal(durationText(0), '0 s');
  assert.equal(durationText(59_999), '59 s');
  assert.equal(durationText(12 * MIN + 5_000), '12 min');
  assert.equal(durationText(119 * MIN), '119 min');
  assert.equal(durationText(185 * MIN), '3 h 5 min');
  assert.equal(durationText(-5), '0 s');
});

/** A seeded stream of sights and times (a 32-bit LCG): statuses, tab counts, page states, gaps. */
function stream(seed, length) {
  let x = seed >>> 0;
  const next = () => { x = (Math.imul(x, 1_664_525) + 1_013_904_223) >>> 0; return x / 2 ** 32; };
  const statuses = ['live', 'offline', 'connecting', 'unauthorized', 'token_missing'];
  const states = [null, 'idle', 'generating', 'error', 'awaiting_approval', 'ready'];
  const out = [];
  let t = T0;
  let status = 'live';
  for (let i = 0; i < length; i += 1) {
    t += next() < 0.03 ? 10 * MIN : Math.floor(next() * STEP);
    if (next() < 0.05) status = statuses[Math.floor(next() * statuses.length)];
    const pages = Array.from({ length: Math.floor(next() * 4) }, (_, k) => {
      const state = next() < 0.7 ? 'error' : states[Math.floor(next() * states.length)];
      return state === 'error'
        ? failed(`wrk-${k}`, next() < 0.5 ? 'generic' : 'usage_limit', next() < 0.2 ? t + Math.floor(next() * 10 * MIN) : undefined)
        : { workerId: `wrk-${k}`, state };
    });
    out.push({ t, sight: { connection: { status }, pages } });
  }
  return out;
}

function replay(events, afterMs) {
  let state = initialWatchdog();
  return events.map(({ t, sight }) => {
    const out = watch(state, t, sight, afterMs);
    state = out.state;
    return out;
  });
}

test('deterministic: the same observations at the same times give the same outputs', () => {
  for (const seed of [1, 7, 19, 2026]) {
    const events = stream(seed, 3_000);
    const a = replay(events, 2 * MIN);
    const b = replay(structuredClone(events), 2 * MIN);
    assert.deepEqual(a, b);
    assert.ok(a.some((o) => o.show.length > 0), `seed ${seed} exercises a notification`);
  }
});

test('nothing it returns can type, send or command: only a badge, notices and a deadline', () => {
  assert.deepEqual(Object.keys(watchdogModule).filter((k) => typeof watchdogModule[k] === 'function').sort(),
    ['durationText', 'initialWatchdog', 'restoreWatchdog', 'watch', 'worthSaving']);
  const ids = new Set([NOTICE_DAEMON, NOTICE_PAGES]);
  for (const seed of [3, 11]) {
    const outs = replay(stream(seed, 3_000), MIN);
    let open = new Set();
    for (const out of outs) {
      assert.deepEqual(Object.keys(out).sort(), ['badge', 'clear', 'show', 'state', 'wakeAtMs']);
      assert.deepEqual(Object.keys(out.badge).sort(), ['color', 'text', 'title']);
      assert.ok(['', '!'].includes(out.badge.text));
      for (const n of out.show) {
        assert.deepEqual(Object.keys(n).sort(), ['id', 'message', 'title']);
        assert.ok(ids.has(n.id) && !open.has(n.id), `${n.id} shown once per episode`);
        open.add(n.id);
      }
      for (const id of out.clear) {
        assert.ok(open.has(id), `${id} cleared only after it was shown`);
        open.delete(id);
      }
      assert.equal(out.badge.text === '!', open.size > 0, 'the badge shows exactly while an episode is open');
    }
  }
});

test('the executor shows the watchdog its connection and the managed pages\' last states, and nothing else changes', () => {
  const bound = { workerId: 'wrk-7', conversationUrl: CONVERSATION, tabId: 5, open: true, seq: 3, observation: { state: 'idle', seq: 3 } };
  const rig = new Rig({ stored: { bindings: [bound] }, openTabs: [{ tabId: 5, url: CONVERSATION }] });
  assert.deepEqual(rig.executor.watchdogSight(), { connection: { status: 'connecting' }, pages: [{ workerId: 'wrk-7', state: 'idle', errorKind: undefined, untilMs: undefined }] });
  rig.connect();
  rig.hello(5, idleFacts());
  const effects = rig.page(5, facts({ userTurns: 1, assistantTurns: 1, error: { kind: 'something_went_wrong', text: 'Something went wrong.' } }));
  const sight = rig.executor.watchdogSight();
  assert.deepEqual(sight.connection, { status: 'live' });
  assert.deepEqual(sight.pages, [{ workerId: 'wrk-7', state: 'error', errorKind: 'generic', untilMs: undefined }]);
  assert.ok(effects.some((e) => e.kind === 'send' && e.message.type === 'conversation.state'));
  assert.deepEqual(rig.executor.watchdogSight(), sight, 'a query: asking twice changes nothing');
  rig.do('tabClosed', 5);
  assert.deepEqual(rig.executor.watchdogSight().pages, []);
});
