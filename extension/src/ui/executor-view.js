// What the operator surfaces show of a worker's executor: a ChatGPT worker is its
// conversation (a link), a CLI worker (Codex CLI, Claude Code) its kind, its session and
// its directory, never a link: `codex:thread/<id>` opens nothing in a browser. Pure: the
// operator.summary's worker in, a plain view model out (docs/protocol/executor.md,
// "Executor kinds").

/** The people's names of the CLI kinds. */
export const CLI_KINDS = {
  codex: { label: 'Codex CLI', prefix: 'codex:thread/' },
  claude: { label: 'Claude Code', prefix: 'claude:session/' },
};

/**
 * A CLI worker's view, or null for a ChatGPT worker (no `executorKind`, or `chatgpt`):
 * `{kind, kindLabel, session, directory, branch, text}`. `session` is the CLI's own id
 * (the part after the prefix of `conversationUrl`), null before the session exists;
 * `text` is the one line the surfaces show, e.g. `Codex CLI · /home/me/src/api on
 * lane-a · session 019a4c2e`.
 */
export function cliView(worker) {
  const kind = CLI_KINDS[worker?.executorKind];
  if (!kind) return null;
  const url = typeof worker.conversationUrl === 'string' ? worker.conversationUrl : '';
  const session = url.startsWith(kind.prefix) && url.length > kind.prefix.length ? url.slice(kind.prefix.length) : null;
  const directory = worker.workspace?.directory ?? null;
  const branch = worker.workspace?.branch ?? null;
  const where = directory ? `${directory}${branch ? ` on ${branch}` : ''}` : 'no directory';
  const text = [kind.label, where, session ? `session ${session}` : 'no session yet'].join(' · ');
  return { kind: worker.executorKind, kindLabel: kind.label, session, directory, branch, text };
}

/**
 * A CLI approval request waiting for a person (the summary's `hold.approval`, from
 * `executor-cli --approvals ask`), or null: `{id, kind, summary, text, approve, decline}`,
 * where `approve` and `decline` are the `approval_answer` actions its buttons send.
 */
export function approvalRequestView(worker) {
  const approval = worker?.hold?.reason === 'awaiting_approval' ? worker.hold.approval : null;
  if (!approval || typeof approval.id !== 'string' || typeof worker.workerId !== 'string') return null;
  const who = cliView(worker)?.kindLabel ?? 'The CLI';
  const what = approval.summary || (approval.kind === 'file_change' ? 'apply file changes' : 'run a command');
  const answer = (decision) => ({ action: 'approval_answer', workerId: worker.workerId, approvalId: approval.id, decision });
  return {
    id: approval.id,
    kind: approval.kind,
    summary: approval.summary,
    text: `${who} asks to ${what}. Approve or decline it here; the session waits meanwhile.`,
    approve: answer('approve'),
    decline: answer('decline'),
  };
}

/** The conversation URL a surface may open as a link: a ChatGPT worker's only. */
export function linkableConversation(worker) {
  return cliView(worker) ? null : worker?.conversationUrl ?? null;
}
