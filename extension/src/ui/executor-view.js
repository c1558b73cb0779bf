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

/** The conversation URL a surface may open as a link: a ChatGPT worker's only. */
export function linkableConversation(worker) {
  return cliView(worker) ? null : worker?.conversationUrl ?? null;
}
