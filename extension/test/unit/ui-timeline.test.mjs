// Unit tests of the timeline picture's geometry (src/ui/timeline-model.js through
// view.js): bars over time from worker_attempts-shaped input, labelled by reason and
// outcome, progress marks from worker_events, ticks, row limits, empty input.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { timelineView, clockLabel, REASONS, OUTCOMES } from '../../src/ui/view.js';

const fixture = (name) => JSON.parse(readFileSync(new URL(`../../../docs/protocol/fixtures/${name}`, import.meta.url), 'utf8'));
const { attempts } = fixture('daemon.operator.data.json').data;
const { events } = fixture('daemon.operator.data.events.json').data;
const NOW = 1764466200000;
const MIN = 60_000;

/** An attempt as worker_attempts returns it (only the fields the picture reads). */
function attempt(sequence, { from, sent = from + 1000, idle = null, ended = null, reason = 'auto_resume', outcome = null, state = 'completed' }) {
  return { sequence, reason, state, outcome, scheduledAtMs: from, submittedAtMs: sent, generatingAtMs: sent, idleAtMs: idle, endedAtMs: ended };
}

test('the fixture: one closed and one running attempt, one progress mark', () => {
  const geo = timelineView({ attempts, events }, { nowMs: NOW, width: 720 });
  assert.equal(geo.rows.length, 2);
  const [closed, open] = geo.rows;
  assert.equal(closed.label, '#3 Auto resume');
  assert.equal(closed.reasonKey, 'auto_resume');
  assert.deepEqual(closed.outcome, { key: 'turn_ended', label: 'Turn ended', glyph: '✓', tone: 'ok', open: false });
  assert.equal(open.label, '#4 Auto resume');
  assert.equal(open.outcome.open, true);
  assert.equal(open.outcome.label, 'Generating');
  assert.equal(Math.round(open.bar.x + open.bar.width), geo.plotX1, 'a running attempt reaches now, the right edge');
  assert.ok(closed.bar.x + closed.bar.width <= open.bar.x + 0.001, 'attempts follow each other in time');
  assert.ok(open.y > closed.y, 'one row per attempt, oldest on top');
  assert.equal(geo.marks.length, 1);
  assert.equal(geo.marks[0].atMs, 1764466100000);
  assert.ok(geo.marks[0].x > open.bar.x && geo.marks[0].x < geo.plotX1, 'the progress mark falls during attempt 4');
  assert.deepEqual(geo.legend, [{ key: 'auto_resume', label: 'Auto resume' }]);
  assert.equal(geo.hiddenCount, 0);
  assert.equal(geo.empty, false);
  assert.match(closed.title, /^Attempt 3 · Auto resume · \d\d:\d\d–\d\d:\d\d · ran 2m · Turn ended$/);
  assert.match(open.title, /–now · ran \d+m · Generating$/);
});

test('bars scale linearly between the first scheduling and the last end', () => {
  const t0 = NOW - 100 * MIN;
  const list = [
    attempt(1, { from: t0, sent: t0, ended: t0 + 20 * MIN, reason: 'initial', outcome: 'turn_ended' }),
    attempt(2, { from: t0 + 50 * MIN, sent: t0 + 60 * MIN, ended: t0 + 80 * MIN, outcome: 'delivery_timeout' }),
  ];
  const geo = timelineView({ attempts: list }, { nowMs: NOW, width: 700 });
  const px = (geo.plotX1 - geo.plotX0) / 80; // per minute
  assert.equal(geo.startMs, t0);
  assert.equal(geo.endMs, t0 + 80 * MIN, 'nothing is open: the axis ends with the last attempt, not now');
  const [a, b] = geo.rows;
  assert.equal(a.bar.x, geo.plotX0);
  assert.ok(Math.abs(a.bar.width - 20 * px) < 1e-9);
  assert.equal(a.lead, null, 'sent at once: no waiting segment');
  assert.ok(Math.abs(b.lead.x - (geo.plotX0 + 50 * px)) < 1e-9, 'the thin lead is the wait between scheduling and sending');
  assert.ok(Math.abs(b.lead.width - 10 * px) < 1e-9);
  assert.ok(Math.abs(b.bar.x - (geo.plotX0 + 60 * px)) < 1e-9);
  assert.deepEqual([b.outcome.label, b.outcome.tone, b.outcome.glyph], ['Delivery timed out', 'warn', '!']);
  assert.deepEqual(geo.legend.map((l) => l.label), ['Initial', 'Auto resume']);
  assert.equal(geo.width, 700);
  assert.ok(geo.height >= geo.rowsBottom);
});

test('an attempt the engine closed because the worker paused or waits does not claim it needs input', () => {
  const geo = timelineView({ attempts: [attempt(1, { from: NOW - MIN, ended: NOW - 1000, outcome: 'worker_blocked', state: 'blocked' })] }, { nowMs: NOW });
  assert.deepEqual([geo.rows[0].outcome.label, geo.rows[0].outcome.tone], ['Paused or waiting', 'warn']);
});

test('every reason and outcome has words; unknown ones still get a neutral label', () => {
  const t0 = NOW - 60 * MIN;
  const reasons = [...Object.keys(REASONS), 'from_the_future'];
  const geo = timelineView({ attempts: reasons.map((reason, i) => attempt(i + 1, { from: t0 + i * MIN, ended: t0 + i * MIN + 30_000, reason, outcome: 'turn_ended' })) }, { nowMs: NOW });
  assert.deepEqual(geo.rows.map((r) => r.label.replace(/^#\d+ /, '')), [...Object.values(REASONS), 'Attempt']);
  assert.equal(geo.rows.at(-1).reasonKey, 'other');
  for (const [key, [label]] of Object.entries(OUTCOMES)) {
    const row = timelineView({ attempts: [attempt(1, { from: t0, ended: t0 + MIN, outcome: key })] }, { nowMs: NOW }).rows[0];
    assert.equal(row.outcome.label, label);
    assert.ok(row.outcome.glyph);
  }
  const odd = timelineView({ attempts: [attempt(1, { from: t0, ended: t0 + MIN, outcome: 'brand_new' })] }, { nowMs: NOW }).rows[0];
  assert.deepEqual([odd.outcome.label, odd.outcome.tone], ['Ended', 'neutral']);
});

test('an attempt never sent has only its waiting segment', () => {
  const t0 = NOW - 30 * MIN;
  const geo = timelineView({ attempts: [
    { sequence: 1, reason: 'manual_resume', state: 'failed', outcome: 'not_delivered', scheduledAtMs: t0, submittedAtMs: null, endedAtMs: t0 + 2 * MIN },
    { sequence: 2, reason: 'auto_resume', state: 'scheduled', outcome: null, scheduledAtMs: NOW - MIN, submittedAtMs: null, endedAtMs: null },
  ] }, { nowMs: NOW });
  const [failed, waiting] = geo.rows;
  assert.equal(failed.bar, null);
  assert.ok(failed.lead.width > 0);
  assert.match(failed.title, /not sent · Not delivered$/);
  assert.equal(waiting.bar, null);
  assert.equal(waiting.outcome.label, 'Scheduled');
  assert.equal(Math.round(waiting.lead.x + waiting.lead.width), geo.plotX1);
});

test('ticks sit on round clock times inside the plot, at most six', () => {
  const t0 = NOW - 9 * 60 * MIN; // an overnight stretch
  const geo = timelineView({ attempts: [attempt(1, { from: t0, state: 'generating' })] }, { nowMs: NOW, tzOffsetMin: 60 });
  assert.ok(geo.ticks.length >= 3 && geo.ticks.length <= 6, `${geo.ticks.length} ticks`);
  for (const t of geo.ticks) {
    assert.ok(t.x >= geo.plotX0 && t.x <= geo.plotX1);
    assert.equal((t.atMs + 60 * MIN) % (120 * MIN), 0, 'on the local even hour');
    assert.match(t.label, /^\d\d:00$/);
  }
  assert.deepEqual(geo.ticks.map((t) => t.x), [...geo.ticks.map((t) => t.x)].sort((a, b) => a - b));
  assert.equal(clockLabel(Date.UTC(2025, 0, 1, 23, 5), 60), '00:05');
  assert.equal(clockLabel(Date.UTC(2025, 0, 1, 3, 30), -300), '22:30');
});

test('the axis fits the attempts shown: a short job fills it, an old one is not squeezed by the time since; only the newest rows are drawn', () => {
  const job = [
    attempt(1, { from: NOW - 50_000, sent: NOW - 49_000, ended: NOW - 35_000, reason: 'initial', outcome: 'turn_ended' }),
    attempt(2, { from: NOW - 34_000, sent: NOW - 33_000, ended: NOW - 20_000, outcome: 'worker_completed' }),
  ];
  const short = timelineView({ attempts: job }, { nowMs: NOW });
  assert.deepEqual([short.startMs, short.endMs], [NOW - 50_000, NOW - 20_000]);
  assert.equal(short.rows[0].lead.x, short.plotX0, 'the first attempt starts at the left edge');
  assert.equal(Math.round(short.rows[1].bar.x + short.rows[1].bar.width), short.plotX1, 'the last one ends at the right edge');
  assert.ok(short.ticks.length >= 3 && short.ticks.length <= 6, `${short.ticks.length} ticks`);
  for (const t of short.ticks) assert.match(t.label, /^\d\d:\d\d:\d\d$/, 'seconds on a short axis');
  const old = timelineView({ attempts: [attempt(1, { from: NOW - 70 * MIN, ended: NOW - 60 * MIN, outcome: 'turn_ended' })] }, { nowMs: NOW });
  assert.equal(old.endMs, NOW - 60 * MIN);
  assert.ok(old.rows[0].bar.width > (old.plotX1 - old.plotX0) * 0.8, 'the bar fills the picture');
  const blip = timelineView({ attempts: [attempt(1, { from: NOW - 3000, sent: NOW - 2500, ended: NOW - 2000, outcome: 'turn_ended' })] }, { nowMs: NOW });
  assert.equal(blip.endMs - blip.startMs, 10_000, 'never under ten seconds');
  const many = Array.from({ length: 30 }, (_, i) => attempt(i + 1, { from: NOW - (30 - i) * 10 * MIN, ended: NOW - (30 - i) * 10 * MIN + 5 * MIN, outcome: 'turn_ended' }));
  const geo = timelineView({ attempts: [...many].reverse() }, { nowMs: NOW, maxRows: 24 });
  assert.equal(geo.rows.length, 24);
  assert.equal(geo.hiddenCount, 6);
  assert.deepEqual([geo.rows[0].sequence, geo.rows.at(-1).sequence], [7, 30]);
});

test('progress marks: only progress events inside the drawn span', () => {
  const t0 = NOW - 60 * MIN;
  const geo = timelineView({
    attempts: [attempt(1, { from: t0, ended: t0 + 30 * MIN, outcome: 'turn_ended' })],
    events: [
      { name: 'worker.progress', atMs: t0 + 10 * MIN, data: { summary: 'a' } },
      { name: 'execution.scheduled', atMs: t0 + 11 * MIN, data: {} },
      { kind: 'worker.progress', atMs: t0 + 20 * MIN, text: 'Progress: b' },
      { name: 'worker.progress', atMs: t0 - 5 * MIN },
      { name: 'worker.progress' },
    ],
  }, { nowMs: NOW, tzOffsetMin: 0 });
  assert.deepEqual(geo.marks.map((m) => m.atMs), [t0 + 10 * MIN, t0 + 20 * MIN]);
  assert.match(geo.marks[0].label, /^Progress at \d\d:\d\d$/);
});

test('no attempts: an empty picture, not an error', () => {
  for (const input of [{}, { attempts: [] }, undefined, { attempts: [{ sequence: 1 }] }]) {
    const geo = timelineView(input, { nowMs: NOW });
    assert.equal(geo.empty, true);
    assert.deepEqual(geo.rows, []);
    assert.deepEqual(geo.marks, []);
  }
});
