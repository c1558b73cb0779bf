// Reconnect backoff: capped exponential with jitter. The random number in [0, 1) is an
// argument, so the schedule is deterministic under test.

/** The shortest wait before a reconnect attempt, in milliseconds. */
export const RECONNECT_MIN_MS = 1_000;

/** The longest wait before a reconnect attempt, in milliseconds. */
export const RECONNECT_MAX_MS = 30_000;

/**
 * The wait before reconnect attempt number `failures` (1 after the first failure), in
 * milliseconds: a ceiling that doubles from RECONNECT_MIN_MS up to RECONNECT_MAX_MS, and a
 * wait drawn uniformly from its upper half ("equal jitter"), never below RECONNECT_MIN_MS.
 */
export function reconnectDelayMs(failures, random) {
  const doublings = Math.min(Math.max(failures - 1, 0), 30);
  const ceiling = Math.min(RECONNECT_MAX_MS, RECONNECT_MIN_MS * 2 ** doublings);
  const unit = Number.isFinite(random) ? Math.min(Math.max(random, 0), 1) : 1;
  return Math.max(RECONNECT_MIN_MS, Math.round(ceiling / 2 + unit * (ceiling / 2)));
}
