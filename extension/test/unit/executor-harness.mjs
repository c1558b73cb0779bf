// Test support for the executor: drives an Executor through its inputs at chosen times,
// keeps what it persisted (as storage.local would) so a restart can be simulated, and
// offers builders for daemon commands and page facts. Not a test file itself.

import { Executor } from '../../src/core/executor.js';

export const T0 = 1_764_466_000_000;
export const CONVERSATION = 'https://chatgpt.com/c/6a1f';
export const OTHER_CONVERSATION = 'https://chatgpt.com/c/7b2e';

export const SETTINGS = Object.freeze({
  daemonUrls: ['ws://127.0.0.1:7411/executor'],
  token: 'secret-token',
  executorId: 'ext-test',
  concurrencyMax: 4,
  managedMax: 8,
  chatBaseUrl: 'https://chatgpt.com/',
});

/** Page facts: a loaded page with a usable composer and no turns, overridden by `over`. */
export function facts(over = {}) {
  return {
    url: CONVERSATION, loaded: true, layout: 'section-2026-08', composer: true, composerEditable: true, composerText: false, sendButton: false,
    sendEnabled: false, stopButton: false, userTurns: 0, assistantTurns: 0, lastAssistantDone: false, lastAssistantTail: '',
    error: null, conversationFull: false, loginRequired: false, challenge: false, usageLimit: null, rateLimited: null,
    suspiciousActivity: null, dialog: null, missing: [], ...over,
  };
}

export const idleFacts = (over = {}) => facts({ userTurns: 1, assistantTurns: 1, latestIsAssistant: true, lastAssistantDone: true, lastAssistantTail: 'STATUS: working', ...over });
export const generatingFacts = (over = {}) => facts({ userTurns: 2, assistantTurns: 2, latestIsAssistant: true, stopButton: true, sendButton: false, ...over });

/** A daemon `command` (without v/type). */
export function command(over = {}) {
  const n = over.n ?? 12;
  return {
    commandId: `cmd-${n}`, kind: 'conversation.send', idempotencyKey: `${over.kind ?? 'conversation.send'}:exe-${n}`,
    workerId: 'wrk-7', attemptId: `exe-${n}`, conversationUrl: CONVERSATION, prompt: 'continue',
    promptVersion: 'continue-v1', deadline: T0 + 120_000, ...over,
  };
}

export class Rig {
  /** `stored`: {journal, bindings} as storage held them; `openTabs`: [{tabId, url}]. */
  constructor({ stored = {}, openTabs = [], settings = SETTINGS, now = T0, random = () => 0.5 } = {}) {
    this.now = now;
    this.storage = { journal: stored.journal ?? [], bindings: stored.bindings ?? [] };
    this.log = [];
    this.connectionId = null;
    this.executor = new Executor({ settings, journal: this.storage.journal, bindings: this.storage.bindings, random });
    this.last = this.#record(this.executor.start(this.now, openTabs));
  }

  #record(effects) {
    for (const e of effects) {
      if (e.kind === 'persist') this.storage[e.key] = structuredClone(e.value);
      if (e.kind === 'openSocket') this.connectionId = e.connectionId;
    }
    this.log.push(...effects);
    return effects;
  }

  /** Calls an executor input at the rig's current time; returns its effects. */
  do(input, ...args) {
    this.last = this.#record(this.executor[input](this.now, ...args));
    return this.last;
  }

  at(ms) {
    this.now = ms;
    return this;
  }

  /** Opens the socket and answers the hello with a welcome; returns the hello message. */
  connect({ heartbeatMs = 20_000 } = {}) {
    if (this.connectionId === null) this.do('wake');
    const hello = sent(this.do('socketOpened', this.connectionId), 'hello')[0];
    this.daemon({ type: 'welcome', protocol: 1, executorId: SETTINGS.executorId, heartbeatMs, messageBytesMax: 1048576, messagesPerSecondMax: 1000 });
    return hello;
  }

  /** A daemon frame (v is added). */
  daemon(message) {
    return this.do('socketMessage', this.connectionId, JSON.stringify({ v: 1, ...message }));
  }

  command(over = {}) {
    return this.daemon({ type: 'command', ...command(over) });
  }

  page(tabId, pageFacts, type = 'page.facts') {
    return this.do('pageMessage', tabId, { type, url: pageFacts.url, facts: pageFacts });
  }

  hello(tabId, pageFacts) {
    return this.page(tabId, pageFacts, 'page.hello');
  }

  /** The executor's own effects of kind `kind` since the rig started. */
  all(kind) {
    return this.log.filter((e) => e.kind === kind);
  }

  /** Every message of `type` sent since the rig started. */
  sentAll(type) {
    return sent(this.log, type);
  }

  /** A new executor over what this one persisted (the background restarted). */
  restart({ openTabs = [], now = this.now } = {}) {
    return new Rig({ stored: structuredClone(this.storage), openTabs, now });
  }
}

/** The messages of `type` among `effects`' sends. */
export function sent(effects, type) {
  return effects.filter((e) => e.kind === 'send' && e.message.type === type).map((e) => e.message);
}

/** The toPage messages of `type` among `effects`. */
export function toPage(effects, type) {
  return effects.filter((e) => e.kind === 'toPage' && e.message.type === type);
}

/** The command.result outcomes for `commandId` among `effects`. */
export function results(effects, commandId) {
  return sent(effects, 'command.result').filter((m) => m.commandId === commandId).map((m) => m.outcome);
}

/** Journal entry of `commandId` in the rig's storage. */
export function journaled(rig, commandId) {
  return rig.storage.journal.find((e) => e.commandId === commandId) ?? null;
}
