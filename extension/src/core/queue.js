// The per-worker serial queue (spec 000 §21): at most one command of a worker is worked on
// at a time, commands of unrelated workers run concurrently up to a limit, and the worker
// whose next command arrived first starts first.

export function createWorkQueue() {
  /** workerId -> [{commandId, order}] waiting, oldest first. */
  const waiting = new Map();
  /** workerId -> commandId being worked on. */
  const active = new Map();
  let arrivals = 0;

  return {
    /** Adds a command at the end of its worker's queue. */
    enqueue(workerId, commandId) {
      const line = waiting.get(workerId) ?? [];
      line.push({ commandId, order: arrivals++ });
      waiting.set(workerId, line);
    },

    /** Removes a waiting (not active) command; true when it was waiting. */
    withdraw(commandId) {
      for (const [workerId, line] of waiting) {
        const index = line.findIndex((item) => item.commandId === commandId);
        if (index >= 0) {
          line.splice(index, 1);
          if (line.length === 0) waiting.delete(workerId);
          return true;
        }
      }
      return false;
    },

    /**
     * Starts as many commands as `limit` allows (one per idle worker, earliest arrival
     * first) and returns them as `[{workerId, commandId}]`.
     */
    startNext(limit) {
      const started = [];
      while (active.size < limit) {
        let next = null;
        for (const [workerId, line] of waiting) {
          if (active.has(workerId)) continue;
          if (!next || line[0].order < next.order) next = { workerId, commandId: line[0].commandId, order: line[0].order };
        }
        if (!next) break;
        const line = waiting.get(next.workerId);
        line.shift();
        if (line.length === 0) waiting.delete(next.workerId);
        active.set(next.workerId, next.commandId);
        started.push({ workerId: next.workerId, commandId: next.commandId });
      }
      return started;
    },

    /** The worker's active command ended. */
    finish(workerId) {
      active.delete(workerId);
    },

    activeCommand(workerId) {
      return active.get(workerId) ?? null;
    },

    get activeCount() {
      return active.size;
    },

    waitingCount(workerId) {
      return waiting.get(workerId)?.length ?? 0;
    },
  };
}
