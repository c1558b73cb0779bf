// State coalescing: one `conversation.state` per real transition of a binding. DOM churn
// that classifies the same is not a transition. Each published observation takes the
// binding's next sequence number; the binding (its seq high-water) must be persisted
// before the observation is published, so sequences keep growing across restarts.
// `unknown` without a reason is never published: it says nothing about the conversation (a
// page loading, a tab showing another chat, a turn between two states), and the last
// published state stays the best knowledge; flickering through `unknown` would make a steady
// idle look like a fresh turn end. `unknown` with a reason (`detail`: what on the page the
// adapter cannot name, and where) is published: the daemon holds the worker and the person is
// told, and the page becomes known again with the next state published.

/** Two classifications are the same state when state, error kind, reset time, detail and block agree. */
export function sameState(a, b) {
  return Boolean(a && b) && a.state === b.state && (a.errorKind ?? null) === (b.errorKind ?? null)
    && (a.untilMs ?? null) === (b.untilMs ?? null) && (a.detail ?? null) === (b.detail ?? null)
    && blockDigest(a) === blockDigest(b);
}

/**
 * A short digest of an observation's block: what a stored observation keeps instead of the
 * block's text (transcript text is never stored), so that after a restart the same idle
 * page is still recognised as no transition. 32-bit FNV-1a over the UTF-16 code units.
 */
export function blockDigest(observation) {
  if (observation?.blockDigest) return observation.blockDigest;
  const text = observation?.block;
  if (!text) return null;
  let hash = 0x811c9dc5;
  for (let i = 0; i < text.length; i += 1) {
    hash ^= text.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193) >>> 0;
  }
  return hash.toString(16).padStart(8, '0');
}

/**
 * The observation to publish for `classification` on a binding whose last published
 * observation and sequence are `last` and `seq`, or null when nothing changed.
 * Returns `{state, errorKind?, seq, block?, untilMs?, detail?}` in the wire's field order.
 */
export function nextObservation(last, seq, classification) {
  if ((classification.state === 'unknown' && !classification.detail) || sameState(last, classification)) return null;
  const observation = { state: classification.state };
  if (classification.state === 'error') observation.errorKind = classification.errorKind ?? 'generic';
  observation.seq = seq + 1;
  if (classification.state === 'idle' && classification.block) observation.block = classification.block;
  if (classification.state === 'error' && classification.untilMs !== undefined) observation.untilMs = classification.untilMs;
  // A page's own words for people: an error's notice, the app an approval card names, or
  // what the adapter did not recognize.
  const detailed = classification.state === 'error' || classification.state === 'awaiting_approval' || classification.state === 'unknown';
  if (detailed && classification.detail !== undefined) observation.detail = classification.detail;
  return observation;
}
