// The command journal (protocol doc "Reconnection and the journal", spec 000 §12.4): one
// entry per command id, with its idempotency key and how far the executor got. Phases
// only move forward: received -> submission-started -> submitted -> completed (a command
// that fails or is cancelled goes straight to completed with its stored result).
//
// Stored entry (storage.local `journal`, oldest first):
//   {commandId, idempotencyKey, workerId, attemptId, kind, phase, stateSeq,
//    conversationUrl, deadline, prompt?, result?, receivedAtMs}
// `conversationUrl` is the command's target, or for conversation.create the URL it made
// once settled. `prompt` is kept only while `received` (a restart must be able to submit
// it); `result` is the command.result outcome once completed.

/** Completed entries kept for deduplication and for `hello` (the newest this many). */
export const COMPLETED_KEPT = 200;

const PHASE_ORDER = { received: 0, 'submission-started': 1, submitted: 2, completed: 3 };

/** A journal transition the rules forbid (a bug in the caller, not bad input). */
export class JournalError extends Error {
  constructor(message) {
    super(message);
    this.name = 'JournalError';
  }
}

function isEntry(entry) {
  return Boolean(entry) && typeof entry.commandId === 'string' && typeof entry.workerId === 'string'
    && typeof entry.attemptId === 'string' && typeof entry.kind === 'string'
    && Object.hasOwn(PHASE_ORDER, entry.phase) && Number.isSafeInteger(entry.stateSeq)
    && (entry.phase !== 'received' || typeof entry.prompt === 'string')
    && (entry.phase !== 'completed' || typeof entry.result?.status === 'string');
}

/** A journal over `stored` (unreadable entries are dropped and counted in `dropped`). */
export function createJournal(stored = []) {
  const loaded = Array.isArray(stored) ? stored : [];
  /** commandId -> entry, in arrival order (Map keeps insertion order). */
  const entries = new Map();
  for (const entry of loaded) if (isEntry(entry)) entries.set(entry.commandId, { ...entry });

  function prune() {
    let completed = 0;
    for (const entry of entries.values()) if (entry.phase === 'completed') completed += 1;
    for (const [id, entry] of entries) {
      if (completed <= COMPLETED_KEPT) break;
      if (entry.phase === 'completed') {
        entries.delete(id);
        completed -= 1;
      }
    }
  }

  function advance(commandId, phase, patch = {}) {
    const entry = entries.get(commandId);
    if (!entry) throw new JournalError(`no journal entry for ${commandId}`);
    if (PHASE_ORDER[phase] <= PHASE_ORDER[entry.phase]) {
      throw new JournalError(`${commandId}: cannot go from ${entry.phase} to ${phase}`);
    }
    Object.assign(entry, patch, { phase });
    delete entry.prompt;
    if (phase === 'completed') prune();
    return entry;
  }

  return {
    dropped: loaded.length - entries.size,

    get(commandId) {
      return entries.get(commandId) ?? null;
    },

    /** The entry that holds this idempotency key past `received`, if any. */
    submittedKey(idempotencyKey) {
      for (const entry of entries.values()) {
        if (entry.idempotencyKey === idempotencyKey && entry.phase !== 'received') return entry;
      }
      return null;
    },

    /** Journals a new command as `received`. */
    receive(command, receivedAtMs) {
      if (entries.has(command.commandId)) throw new JournalError(`${command.commandId} is already journaled`);
      const entry = {
        commandId: command.commandId,
        idempotencyKey: command.idempotencyKey,
        workerId: command.workerId,
        attemptId: command.attemptId,
        kind: command.kind,
        phase: 'received',
        stateSeq: 0,
        conversationUrl: command.conversationUrl,
        deadline: command.deadline,
        prompt: command.prompt,
        receivedAtMs,
      };
      entries.set(entry.commandId, entry);
      return entry;
    },

    /** Submission began (typing or clicking) with the binding at sequence `stateSeq`. */
    startSubmission(commandId, stateSeq) {
      return advance(commandId, 'submission-started', { stateSeq });
    },

    /** The page accepted the prompt. */
    markSubmitted(commandId) {
      return advance(commandId, 'submitted');
    },

    /** A conversation.create's URL settled. */
    setConversationUrl(commandId, conversationUrl) {
      const entry = entries.get(commandId);
      if (entry) entry.conversationUrl = conversationUrl;
      return entry;
    },

    /** The command is finished and `result` (a command.result outcome) is stored. */
    complete(commandId, result) {
      return advance(commandId, 'completed', { result });
    },

    /** A command id this executor never received, withdrawn before it came: completed as `result`. */
    recordWithdrawn(command, result, receivedAtMs) {
      const entry = this.receive(command, receivedAtMs);
      return advance(entry.commandId, 'completed', { result });
    },

    /** All entries, oldest first (the value to persist). */
    stored() {
      return [...entries.values()].map((entry) => ({ ...entry }));
    },

    /**
     * The journal lines for `hello`. A completed command that failed is left out: the
     * daemon reads `completed` as submitted, so it must instead re-send that command,
     * which is then answered with the stored failure.
     */
    helloLines() {
      const lines = [];
      for (const entry of entries.values()) {
        if (entry.phase === 'completed' && entry.result.status !== 'submitted') continue;
        const line = { commandId: entry.commandId, phase: entry.phase, stateSeq: entry.stateSeq };
        if (entry.kind === 'conversation.create' && entry.conversationUrl) line.conversationUrl = entry.conversationUrl;
        lines.push(line);
      }
      return lines;
    },

    /**
     * What a restart must do (spec 000 §12.4), oldest first: `requeue` the `received`
     * entries (nothing was typed), `reconcile` the `submission-started` ones (ask the page
     * for the nonce; never resubmit), and `finish` the `submitted` ones (store their result).
     */
    recoveryPlan() {
      const plan = { requeue: [], reconcile: [], finish: [] };
      const byArrival = [...entries.values()].sort((a, b) => (a.receivedAtMs ?? 0) - (b.receivedAtMs ?? 0));
      for (const entry of byArrival) {
        if (entry.phase === 'received') plan.requeue.push(entry);
        else if (entry.phase === 'submission-started') plan.reconcile.push(entry);
        else if (entry.phase === 'submitted') plan.finish.push(entry);
      }
      return plan;
    },
  };
}
