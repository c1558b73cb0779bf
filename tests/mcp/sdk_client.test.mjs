// MCP client tests with the official TypeScript SDK (@modelcontextprotocol/sdk, the client
// library of Claude Code, VS Code and most Node-based agents) against real daemon processes:
// over streamable HTTP every one of the 30 tools is called, and the SDK itself checks each
// answer's structuredContent against the tool's outputSchema (it refuses a result that does
// not validate); over stdio the tools are listed and called; a missing or wrong token keeps
// the SDK out.
//
// Run by run.sh with the Node 22 from node_modules, ORCHESTRATOR_BIN and FAKE_EXECUTOR_BIN
// set: `node --test sdk_client.test.mjs`.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, openSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';

const ORCHESTRATOR = process.env.ORCHESTRATOR_BIN;
const FAKE_EXECUTOR = process.env.FAKE_EXECUTOR_BIN;
const TOKEN = 'typescript-sdk-token-0123456789';
/** How long a daemon may take to print its endpoint. */
const START_TIMEOUT_MS = 30_000;

/** A daemon process on a free loopback port with a fresh data directory. */
async function startDaemon(binary, args) {
  const dir = mkdtempSync(join(tmpdir(), 'orchestrator-ts-'));
  const stderr = openSync(join(dir, 'stderr.log'), 'w');
  const env = { ...process.env };
  delete env.ORCHESTRATOR_MCP_TOKEN;
  const child = spawn(binary, [...args, '--data-dir', join(dir, 'data'), '--listen', '127.0.0.1:0'], {
    stdio: ['ignore', 'pipe', stderr], env,
  });
  const lines = createInterface({ input: child.stdout });
  const url = await new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('the daemon did not start in time')), START_TIMEOUT_MS);
    lines.on('line', (line) => {
      const prefix = 'orchestrator: MCP endpoint ';
      if (line.startsWith(prefix)) {
        clearTimeout(timer);
        resolve(line.slice(prefix.length).trim());
      }
    });
    child.on('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`the daemon exited with ${code}: ${readFileSync(join(dir, 'stderr.log'), 'utf8')}`));
    });
  });
  return {
    url,
    dir,
    /** SIGTERM, then the exit code. */
    stop: () => new Promise((resolve) => {
      child.removeAllListeners('exit');
      child.on('exit', (code) => resolve(code));
      child.kill('SIGTERM');
    }),
  };
}

async function httpClient(url, token = TOKEN) {
  const headers = token ? { Authorization: `Bearer ${token}` } : {};
  const transport = new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers } });
  const client = new Client({ name: 'orchestrator-ts-sdk-test', version: '1.0.0' });
  await client.connect(transport);
  return client;
}

/** Calls a tool that must succeed (the SDK has already validated it against its outputSchema). */
async function ok(client, called, name, args) {
  called.add(name);
  const result = await client.callTool({ name, arguments: args });
  assert.ok(!result.isError, `${name} failed: ${result.content?.[0]?.text}`);
  assert.ok(result.structuredContent, `${name} has structuredContent`);
  assert.deepEqual(JSON.parse(result.content[0].text), result.structuredContent, `${name}: text and structure agree`);
  return result.structuredContent;
}

/** Calls a tool that must be refused with `code`: the SDK hands the refusal over as a
 *  result (it would throw if the refusal carried structuredContent not matching the
 *  tool's success schema), with `{code, message}` as JSON text. */
async function refused(client, name, args, code) {
  const result = await client.callTool({ name, arguments: args });
  assert.equal(result.isError, true, `${name} should be refused: ${JSON.stringify(result)}`);
  assert.equal(result.structuredContent, undefined, `${name}: a refusal has no structuredContent`);
  const error = JSON.parse(result.content[0].text);
  assert.equal(error.code, code, `${name}: ${result.content[0].text}`);
  return error.message;
}

test('TypeScript SDK over streamable HTTP: every tool answers, and every answer validates against its outputSchema', async () => {
  const daemon = await startDaemon(FAKE_EXECUTOR, ['--mcp-token', TOKEN, '--turn-ms', '200']);
  const client = await httpClient(daemon.url);
  try {
    const { tools } = await client.listTools();
    assert.equal(tools.length, 30, tools.map((t) => t.name).join(' '));
    for (const tool of tools) {
      assert.equal(tool.inputSchema.type, 'object', tool.name);
      assert.equal(tool.outputSchema?.type, 'object', tool.name);
    }
    const called = new Set();
    const run = await ok(client, called, 'run_create', {
      taskName: 'TypeScript SDK', rootConversationName: 'Root', context: 'all the tools',
      defaultPolicy: { mode: 'manual' },
    });
    const runId = run.runId;
    assert.equal((await ok(client, called, 'run_get', { runId })).taskName, 'TypeScript SDK');
    assert.equal((await ok(client, called, 'run_list', { includeTerminal: true })).runs.length, 1);
    assert.equal((await ok(client, called, 'run_update_context', { runId, context: 'changed' })).context, 'changed');
    await ok(client, called, 'run_set_default_continuation', { runId, policy: { idleGraceMs: 500 } });

    const spawn = (name) => ok(client, called, 'worker_spawn', {
      runId, name, taskSummary: `lane ${name}`, assignment: { objective: 'exercise the tools' }, start: false,
    });
    const a = (await spawn('/root/a')).workerId;
    const b = (await spawn('/root/b')).workerId;
    const c = (await spawn('/root/c')).workerId;
    const attached = await ok(client, called, 'worker_attach', { workerId: a, conversationUrl: 'https://chatgpt.example/c/ts-a' });
    assert.equal(attached.binding?.conversationUrl, 'https://chatgpt.example/c/ts-a');
    assert.equal((await ok(client, called, 'worker_get', { workerId: a })).workerId, a);
    assert.equal((await ok(client, called, 'worker_list', { runId })).workers.length, 4);
    const progressed = await ok(client, called, 'worker_progress', { workerId: a, summary: 'first step', commit: 'abc1234' });
    assert.equal(progressed.progress.attemptsWithoutProgress, 0);
    await ok(client, called, 'worker_continuation_get', { workerId: a });
    await ok(client, called, 'worker_continuation_set', { workerId: a, policy: { mode: 'auto', idleGraceMs: 0 } });
    await ok(client, called, 'worker_steer', { workerId: a, outcome: 'request_evidence', message: 'Show the test output.' });
    await ok(client, called, 'worker_pause', { workerId: a, afterCurrentTurn: false });
    await ok(client, called, 'worker_resume', { workerId: a });
    await ok(client, called, 'worker_continue_now', { workerId: b });
    assert.ok((await ok(client, called, 'worker_attempts', { workerId: a })).attempts.length >= 1);
    await ok(client, called, 'message_send', { to: a, body: 'a note from root', from: run.rootWorkerId });
    const acknowledged = await ok(client, called, 'worker_progress', { workerId: a, summary: 'second step' });
    assert.deepEqual(Object.keys(acknowledged).sort(),
      ['disposition', 'inboxCount', 'lifecycle', 'name', 'pause', 'pauseAfterTurn', 'progress', 'workerId'],
      'worker_progress answers with a short acknowledgement, not the whole worker');
    assert.equal(acknowledged.inboxCount, 1, 'the message is counted');

    await ok(client, called, 'worker_await_human', { workerId: b, reason: 'needs a decision', question: 'Ship it?', choices: ['yes', 'no'] });
    await ok(client, called, 'worker_resolve_human', { workerId: b, answer: 'yes' });
    await ok(client, called, 'worker_await_dependency', { workerId: b, dependency: { description: 'CI is green' }, reason: 'waits for CI' });
    await ok(client, called, 'worker_release_dependency', { workerId: b, note: 'CI passed' });
    await ok(client, called, 'run_pause_all', { runId });
    await ok(client, called, 'run_resume_all', { runId });

    await ok(client, called, 'worker_followup', { workerId: a, instructions: 'One more check, please.' });
    assert.equal((await ok(client, called, 'worker_complete', { workerId: a, summary: 'done' })).disposition, 'completed');
    assert.equal((await ok(client, called, 'worker_fail', { workerId: b, reason: 'cannot go on' })).lifecycle, 'failed');
    await ok(client, called, 'worker_interrupt', { workerId: c, reason: 'not needed' });
    const page = await ok(client, called, 'events_wait', { cursor: 0, runId, limit: 500 });
    assert.equal(page.events[0].name, 'run.created');
    await ok(client, called, 'run_cancel', { runId, reason: 'the test is over' });

    const missing = tools.map((t) => t.name).filter((name) => !called.has(name));
    assert.deepEqual(missing, [], 'every tool was called');

    assert.match(await refused(client, 'worker_progress', { summary: 'no worker' }, 'INVALID_ARGUMENT'), /workerId/);
    await refused(client, 'worker_get', { workerId: 'wrk-4242' }, 'UNKNOWN_WORKER');
  } finally {
    await client.close();
    assert.equal(await daemon.stop(), 0, 'SIGTERM exits 0');
  }
});

test('TypeScript SDK over streamable HTTP: a missing or wrong token keeps it out', async () => {
  const daemon = await startDaemon(ORCHESTRATOR, ['serve', '--mcp-token', TOKEN]);
  try {
    for (const token of [null, 'wrong-token-0123456789']) {
      await assert.rejects(httpClient(daemon.url, token), /missing or wrong bearer token/, `token ${token}`);
    }
    const client = await httpClient(daemon.url);
    assert.equal((await client.listTools()).tools.length, 30);
    await client.close();
  } finally {
    assert.equal(await daemon.stop(), 0);
  }
});

test('TypeScript SDK over stdio: tools are listed and called, refusals are tool errors', async () => {
  const data = mkdtempSync(join(tmpdir(), 'orchestrator-ts-stdio-'));
  const transport = new StdioClientTransport({ command: ORCHESTRATOR, args: ['mcp-stdio', '--data-dir', data], stderr: 'ignore' });
  const client = new Client({ name: 'orchestrator-ts-sdk-test', version: '1.0.0' });
  await client.connect(transport);
  try {
    assert.equal((await client.listTools()).tools.length, 30);
    const called = new Set();
    const run = await ok(client, called, 'run_create', { taskName: 'Stdio', rootConversationName: 'Root' });
    const lane = await ok(client, called, 'worker_spawn', {
      runId: run.runId, name: '/root/a', taskSummary: 't', assignment: { objective: 'o' },
    });
    assert.equal(lane.currentAttempt?.reason, 'initial');
    await refused(client, 'run_get', { runId: 'run-4242' }, 'UNKNOWN_RUN');
  } finally {
    await client.close();
  }
});
