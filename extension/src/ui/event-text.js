// The sentence a person reads for a continuity event (the daemon's own words when it sent
// some, else a label by the event's name), and a worker's five most recent ones: for the
// overlay's drawer, the dashboard's recent events and the popup.

/** Up to five recent continuity events, newest first: `{atMs, text}`. */
export function recentEvents(events) {
  return (Array.isArray(events) ? events : [])
    .filter((e) => typeof e?.atMs === 'number')
    .sort((a, b) => b.atMs - a.atMs)
    .slice(0, 5)
    .map((e) => ({ atMs: e.atMs, text: eventText(e) }));
}

const EVENT_TEXT = {
  'worker.progress': 'Progress checkpoint',
  'worker.completed': 'Completed',
  'worker.failed': 'Failed',
  'worker.cancelled': 'Stopped',
  'worker.followup': 'Follow-up sent',
  'worker.awaiting_human': 'Needs you',
  'worker.human_resolved': 'Answer received',
  'worker.awaiting_dependency': 'Waiting for a dependency',
  'worker.dependency_released': 'Dependency released',
  'worker.paused': 'Paused',
  'worker.resumed': 'Resumed',
  'continuation.policy_changed': 'Auto Resume changed',
  'execution.resume_scheduled': 'Resume scheduled',
  'execution.resume_cancelled': 'Resume cancelled',
  'execution.deferred': 'Resume deferred',
  'execution.submitted': 'Prompt sent',
  'execution.generating': 'Generating',
  'execution.idle': 'Turn ended',
  'execution.ended': 'Attempt ended',
  'continuation.warning': 'Stall warning',
  'continuation.paused_for_stall': 'Paused: appears stuck',
  'continuation.stall_acknowledged': 'Continued anyway',
  'binding.verified': 'Conversation attached',
  'worker.attached': 'Attached to a conversation',
  'deadman.fired': 'Run stopped moving',
  'binding.lost': 'Conversation lost',
  'conversation.error': 'The conversation showed an error',
  'execution.steer_landed': 'The steer became the next turn',
  'block.reported': 'Status block reported',
  'block.invalid': 'Status block unreadable',
};

const SCHEDULED_TEXT = {
  auto_resume: 'Auto-resumed',
  manual_resume: 'Continued by you',
  initial: 'Started',
  followup: 'Follow-up',
  recovery: 'Recovery attempt',
  checkpoint: 'Checkpoint',
  corrective: 'Correction from root',
};

/**
 * A person's line for an event. Accepts the summary's `{kind, text}` (the daemon's own
 * words win) and the event log's `{name, data}` (worker_events).
 */
export function eventText(event) {
  if (typeof event?.text === 'string' && event.text.trim()) return event.text.trim();
  const name = event?.name ?? event?.kind ?? '';
  const data = event?.data ?? {};
  if (name === 'execution.scheduled') return SCHEDULED_TEXT[data.reason] ?? 'Attempt scheduled';
  if (name === 'worker.progress' && typeof data.summary === 'string' && data.summary) return `Progress: ${data.summary}`;
  return EVENT_TEXT[name] ?? 'Event';
}
