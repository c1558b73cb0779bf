// A small MCP client over streamable HTTP for the browser tests: the test plays the
// agent inside the conversation (worker_progress, worker_complete, ...) and the operator.
import { MCP_TOKEN } from './daemon.mjs';

/** How long a call keeps retrying while the daemon restarts. */
const RECONNECT_WINDOW_MS = 20_000;
const RECONNECT_PAUSE_MS = 200;

export class McpClient {
  constructor(url) {
    this.url = url;
    this.session = null;
    // The protocol version `initialize` settled on (null before it): sent on every later
    // request; a stateless server keeps no session, so this also says "initialized".
    this.protocol = null;
    this.nextId = 1;
  }

  async rpc(method, params, { notification = false } = {}) {
    const body = { jsonrpc: '2.0', method, params };
    if (!notification) body.id = this.nextId++;
    const headers = {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      authorization: `Bearer ${MCP_TOKEN}`,
    };
    if (this.session) headers['mcp-session-id'] = this.session;
    if (this.protocol) headers['mcp-protocol-version'] = this.protocol;
    const response = await fetch(this.url, { method: 'POST', headers, body: JSON.stringify(body) });
    this.session = response.headers.get('mcp-session-id') ?? this.session;
    if (notification) return null;
    const text = await response.text();
    if (!response.ok) throw new Error(`MCP ${method}: HTTP ${response.status}: ${text}`);
    const message = parseMessage(text, body.id);
    if (message.error) throw new Error(`MCP ${method}: ${JSON.stringify(message.error)}`);
    return message.result;
  }

  async connect() {
    this.session = null;
    this.protocol = null;
    const init = await this.rpc('initialize', {
      protocolVersion: '2025-06-18',
      capabilities: {},
      clientInfo: { name: 'extension-e2e', version: '1' },
    });
    this.protocol = init.protocolVersion;
    await this.rpc('notifications/initialized', {}, { notification: true });
    return this;
  }

  /**
   * Calls a tool; returns its structured content, throws on `isError` with the code. Like
   * a real agent's client, it rides out a daemon restart: an unreachable daemon or a
   * session the new process does not know is retried (new session) for a while.
   */
  async call(name, args = {}) {
    const deadline = Date.now() + RECONNECT_WINDOW_MS;
    let result;
    for (;;) {
      try {
        if (!this.protocol) await this.connect();
        result = await this.rpc('tools/call', { name, arguments: args });
        break;
      } catch (error) {
        const transient = error instanceof TypeError || /HTTP (404|400)/.test(error.message);
        if (!transient || Date.now() > deadline) throw error;
        this.session = null;
        this.protocol = null;
        await new Promise((r) => setTimeout(r, RECONNECT_PAUSE_MS));
      }
    }
    if (result.isError) {
      const error = new Error(`${name}: ${result.content?.map((c) => c.text).join(' ')}`);
      error.structured = JSON.parse(result.content?.[0]?.text ?? 'null');
      throw error;
    }
    return result.structuredContent;
  }
}

function parseMessage(text, id) {
  const trimmed = text.trim();
  if (trimmed.startsWith('{')) return JSON.parse(trimmed);
  for (const line of trimmed.split('\n')) {
    if (!line.startsWith('data:')) continue;
    const data = line.slice(5).trim();
    if (!data) continue;
    const message = JSON.parse(data);
    if (message.id === id) return message;
  }
  throw new Error(`no JSON-RPC answer with id ${id} in: ${text.slice(0, 500)}`);
}
