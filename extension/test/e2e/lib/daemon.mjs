// Runs the real `orchestrator serve` daemon for browser tests: a temporary data
// directory, fixed test tokens, a free loopback port that survives restarts, with
// `{oauth: true}` the OAuth server on `--public-url http://127.0.0.1:PORT`, and one-time
// pairing codes asked for as `orchestrator pair` does.
import { spawn } from 'node:child_process';
import { createServer } from 'node:net';
import { mkdtempSync, rmSync, openSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { createInterface } from 'node:readline';

const REPO = resolve(new URL('../../../..', import.meta.url).pathname);
export const MCP_TOKEN = 'e2e-mcp-token-0123456789abcdef0123';
export const EXECUTOR_TOKEN = 'e2e-executor-token-0123456789abcdef';
const START_TIMEOUT_MS = 30_000;
const STOP_TIMEOUT_MS = 20_000;

/** The daemon binary: $ORCHESTRATOR_BIN, else the debug build `cargo test` leaves behind. */
export function daemonBinary() {
  return process.env.ORCHESTRATOR_BIN ?? join(REPO, 'target', 'debug', 'orchestrator');
}

export class Daemon {
  constructor({ oauth = false } = {}) {
    this.dir = mkdtempSync(join(tmpdir(), 'orc-e2e-'));
    this.port = 0;
    this.child = null;
    this.mcpUrl = '';
    this.oauth = oauth;
  }

  /** The public URL the OAuth server answers for (with `{oauth: true}`). */
  get publicUrl() {
    return `http://127.0.0.1:${this.port}`;
  }

  /** Starts (or restarts, on the same port) the daemon and waits for its MCP endpoint line. */
  async start() {
    const log = openSync(join(this.dir, 'daemon.log'), 'a');
    // The public URL names the port, so it is chosen before the start.
    if (this.oauth && this.port === 0) this.port = await freePort();
    const args = ['serve', '--data-dir', join(this.dir, 'data'), '--listen', `127.0.0.1:${this.port}`,
      '--mcp-token', MCP_TOKEN, '--executor-token', EXECUTOR_TOKEN, '--log-level', 'info,rmcp=warn'];
    if (this.oauth) args.push('--public-url', this.publicUrl);
    const child = spawn(daemonBinary(), args, { stdio: ['ignore', 'pipe', log], env: cleanEnv() });
    this.child = child;
    const exited = new Promise((_, reject) => child.once('exit', (code) =>
      reject(new Error(`daemon exited with ${code} before announcing its endpoint; log: ${this.logTail()}`))));
    const announced = new Promise((resolveUrl) => {
      createInterface({ input: child.stdout }).on('line', (line) => {
        const url = line.match(/^orchestrator: MCP endpoint (\S+)/)?.[1];
        if (url) resolveUrl(url);
      });
    });
    const url = await withTimeout(Promise.race([announced, exited]), START_TIMEOUT_MS, 'daemon start');
    this.mcpUrl = url;
    this.port = Number(new URL(url).port);
    return this;
  }

  get executorUrl() {
    return `ws://127.0.0.1:${this.port}/executor`;
  }

  /** A fresh one-time pairing code, as `orchestrator pair` gets it (`POST /pair/code`, the MCP token). */
  async pairCode() {
    const answer = await fetch(`http://127.0.0.1:${this.port}/pair/code`, {
      method: 'POST', headers: { authorization: `Bearer ${MCP_TOKEN}` },
    });
    if (answer.status !== 200) throw new Error(`POST /pair/code answered ${answer.status}: ${await answer.text()}`);
    return (await answer.json()).code;
  }

  /** SIGKILL: no flush, no goodbye. */
  async kill9() {
    await this.signal('SIGKILL');
  }

  /** SIGTERM and wait for a clean exit. */
  async stop() {
    await this.signal('SIGTERM');
  }

  async signal(name) {
    const child = this.child;
    if (!child || child.exitCode !== null || child.signalCode !== null) return;
    const done = new Promise((r) => child.once('exit', r));
    child.kill(name);
    await withTimeout(done, STOP_TIMEOUT_MS, `daemon ${name}`);
    this.child = null;
  }

  logTail(bytes = 4000) {
    try {
      const text = readFileSync(join(this.dir, 'daemon.log'), 'utf8');
      return text.slice(-bytes);
    } catch {
      return '(no log)';
    }
  }

  async dispose() {
    await this.stop().catch(() => this.child?.kill('SIGKILL'));
    rmSync(this.dir, { recursive: true, force: true });
  }
}

/** A loopback port that was free a moment ago. */
function freePort() {
  return new Promise((resolvePort, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolvePort(port));
    });
  });
}

function cleanEnv() {
  const env = { ...process.env };
  for (const key of ['ORCHESTRATOR_MCP_TOKEN', 'ORCHESTRATOR_DATA_DIR', 'ORCHESTRATOR_EXECUTOR_TOKEN']) delete env[key];
  return env;
}

export async function withTimeout(promise, ms, what) {
  let timer;
  const timeout = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new Error(`timed out after ${ms} ms: ${what}`)), ms);
  });
  try {
    return await Promise.race([promise, timeout]);
  } finally {
    clearTimeout(timer);
  }
}
