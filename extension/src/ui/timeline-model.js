// Pure geometry of a worker's timeline picture: its execution attempts (worker_attempts)
// as one labelled bar per row over a shared time axis, and its durable progress events
// (worker_events) as marks. No DOM and no clock: `nowMs` ends still-open attempts.
// Bars are coloured by reason (CSS class `r-<reason>`) and carry the outcome as text and
// glyph, so neither depends on colour alone. dashboard's timeline.js draws the SVG.

/** Why an attempt was started: the label and colour class of its bar. */
export const REASONS = {
  initial: 'Initial',
  auto_resume: 'Auto resume',
  manual_resume: 'Continue now',
  followup: 'Follow-up',
  recovery: 'Recovery',
  checkpoint: 'Checkpoint',
  corrective: 'Correction',
};

/** How an attempt ended: label, glyph and tone (`ok`, `warn`, `bad`, `neutral`). */
export const OUTCOMES = {
  turn_ended: ['Turn ended', '✓', 'ok'],
  steered: ['Steered', '✓', 'ok'],
  worker_completed: ['Worker completed', '✓', 'ok'],
  worker_failed: ['Worker failed', '✕', 'bad'],
  worker_cancelled: ['Worker stopped', '■', 'neutral'],
  // The engine closes an attempt this way when the worker pauses or waits (for a person or a dependency).
  worker_blocked: ['Paused or waiting', '‖', 'warn'],
  delivery_timeout: ['Delivery timed out', '!', 'warn'],
  ambiguous: ['Unclear if sent', '?', 'bad'],
  host_ui_changed: ['Page changed', '✕', 'bad'],
  not_delivered: ['Not delivered', '!', 'warn'],
  conversation_lost: ['Conversation lost', '!', 'warn'],
  page_error: ['Page error', '!', 'warn'],
  withdrawn: ['Withdrawn', '–', 'neutral'],
};

const OPEN_STATES = {
  scheduled: 'Scheduled',
  submitted: 'Sent',
  generating: 'Generating',
  idle: 'Turn ended',
};

const LAYOUT = { labelWidth: 150, outcomeWidth: 150, markLane: 16, rowHeight: 18, rowGap: 6, axisHeight: 22 };
// The axis spans the attempts shown (to now while one is open), never less than this: a
// job of a few seconds fills the picture instead of crowding against one edge.
const MIN_SPAN_MS = 10_000;
const TICK_STEPS_MS = [5_000, 10_000, 15_000, 30_000, ...[1, 2, 5, 10, 15, 30, 60, 120, 180, 360, 720, 1440].map((m) => m * 60_000)];
const TICKS_MAX = 6;

/** `HH:MM` (or `HH:MM:SS` with `seconds`) of `atMs` in a zone `tzOffsetMin` minutes east of UTC. */
export function clockLabel(atMs, tzOffsetMin = 0, seconds = false) {
  const d = new Date(atMs + tzOffsetMin * 60_000);
  const two = (n) => String(n).padStart(2, '0');
  return `${two(d.getUTCHours())}:${two(d.getUTCMinutes())}${seconds ? `:${two(d.getUTCSeconds())}` : ''}`;
}

function outcomeOf(a) {
  if (a.outcome) {
    const [label, glyph, tone] = OUTCOMES[a.outcome] ?? ['Ended', '–', 'neutral'];
    return { key: a.outcome, label, glyph, tone, open: false };
  }
  const ended = typeof a.endedAtMs === 'number';
  if (ended) return { key: a.state ?? 'ended', label: 'Ended', glyph: '–', tone: 'neutral', open: false };
  return { key: a.state ?? 'open', label: OPEN_STATES[a.state] ?? 'In progress', glyph: '…', tone: 'open', open: true };
}

function endOf(a, nowMs) {
  return a.endedAtMs ?? (outcomeOf(a).open ? nowMs : a.idleAtMs ?? a.submittedAtMs ?? a.scheduledAtMs);
}

/**
 * The picture of one worker. `attempts`: worker_attempts' list (any order); `events`:
 * worker_events' list (progress events become marks). Options: `nowMs` (required),
 * `width` (px), `tzOffsetMin` (tick labels), `maxRows` (older attempts are counted in
 * `hiddenCount`).
 */
export function timelineView({ attempts = [], events = [] } = {}, { nowMs, width = 720, tzOffsetMin = 0, maxRows = 24 } = {}) {
  const all = attempts.filter((a) => typeof a?.scheduledAtMs === 'number').sort((a, b) => a.sequence - b.sequence);
  const shown = all.slice(-maxRows);
  const plotX0 = LAYOUT.labelWidth;
  const plotX1 = Math.max(plotX0 + 80, width - LAYOUT.outcomeWidth);
  const rowsTop = LAYOUT.markLane + 4;
  const rowsBottom = rowsTop + shown.length * (LAYOUT.rowHeight + LAYOUT.rowGap);
  const height = rowsBottom + LAYOUT.axisHeight;

  // From the first attempt shown to the last one's end, or to now while one is open (a job
  // that finished an hour ago is not squeezed to the left by the hour since).
  const open = shown.some((a) => outcomeOf(a).open);
  const endMs = open || shown.length === 0 ? nowMs : Math.max(...shown.map((a) => endOf(a, nowMs)));
  const startMs = Math.min(endMs - MIN_SPAN_MS, ...shown.map((a) => a.scheduledAtMs));
  const scale = (plotX1 - plotX0) / (endMs - startMs);
  const x = (t) => plotX0 + (Math.min(Math.max(t, startMs), endMs) - startMs) * scale;
  const span = (from, to) => (to > from ? { x: x(from), width: Math.max(2, x(to) - x(from)) } : null);

  const rows = shown.map((a, i) => {
    const outcome = outcomeOf(a);
    const reasonLabel = REASONS[a.reason] ?? 'Attempt';
    const startedAt = a.submittedAtMs ?? null;
    const end = endOf(a, nowMs);
    const duration = startedAt === null ? null : end - startedAt;
    return {
      y: rowsTop + i * (LAYOUT.rowHeight + LAYOUT.rowGap),
      height: LAYOUT.rowHeight,
      sequence: a.sequence,
      reasonKey: REASONS[a.reason] ? a.reason : 'other',
      label: `#${a.sequence} ${reasonLabel}`,
      lead: span(a.scheduledAtMs, startedAt ?? end),
      bar: startedAt === null ? null : span(startedAt, end) ?? { x: x(startedAt), width: 2 },
      outcome,
      title: [`Attempt ${a.sequence}`, reasonLabel, `${clockLabel(a.scheduledAtMs, tzOffsetMin)}–${outcome.open ? 'now' : clockLabel(end, tzOffsetMin)}`,
        duration === null ? 'not sent' : `ran ${durationText(duration)}`, outcome.label].join(' · '),
    };
  });

  const marks = events
    .filter((e) => isProgressEvent(e) && typeof e.atMs === 'number' && e.atMs >= startMs && e.atMs <= endMs)
    .map((e) => ({ x: x(e.atMs), atMs: e.atMs, label: `Progress at ${clockLabel(e.atMs, tzOffsetMin)}` }));

  return {
    width: plotX1 + LAYOUT.outcomeWidth,
    height,
    plotX0,
    plotX1,
    rowsTop,
    rowsBottom,
    markY: LAYOUT.markLane / 2,
    startMs,
    endMs,
    rows,
    marks,
    ticks: ticks(startMs, endMs, tzOffsetMin, x),
    legend: [...new Set(rows.map((r) => r.reasonKey))].map((key) => ({ key, label: REASONS[key] ?? 'Attempt' })),
    hiddenCount: all.length - shown.length,
    empty: shown.length === 0,
  };
}

/** Whether an event marks durable progress: `worker.progress` in the event log or the summary. */
function isProgressEvent(e) {
  return (e?.name ?? e?.kind) === 'worker.progress';
}

function durationText(ms) {
  const m = Math.round(ms / 60_000);
  if (m < 1) return `${Math.max(0, Math.round(ms / 1000))}s`;
  return m < 60 ? `${m}m` : `${Math.floor(m / 60)}h ${m % 60}m`;
}

/** Ticks on round local clock values, at most TICKS_MAX of them, with seconds in their labels when the step is under a minute. */
function ticks(startMs, endMs, tzOffsetMin, x) {
  const step = TICK_STEPS_MS.find((s) => (endMs - startMs) / s < TICKS_MAX) ?? TICK_STEPS_MS.at(-1);
  const offset = tzOffsetMin * 60_000;
  const out = [];
  for (let t = Math.ceil((startMs + offset) / step) * step - offset; t <= endMs; t += step) {
    out.push({ x: x(t), atMs: t, label: clockLabel(t, tzOffsetMin, step < 60_000) });
  }
  return out;
}
