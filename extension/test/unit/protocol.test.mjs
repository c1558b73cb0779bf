// The protocol codec against the golden fixtures (docs/protocol/fixtures) and bad input.

import test from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import {
  decodeDaemonMessage, decodeExecutorMessage, encodeMessage, WireError, DAEMON_MESSAGE_TYPES, EXECUTOR_MESSAGE_TYPES,
  MESSAGE_BYTES_MAX,
} from '../../src/core/protocol.js';

const FIXTURES = fileURLToPath(new URL('../../../docs/protocol/fixtures/', import.meta.url));
const fixtureNames = readdirSync(FIXTURES).filter((name) => name.endsWith('.json')).sort();

function fixture(name) {
  return readFileSync(`${FIXTURES}${name}`, 'utf8').trimEnd();
}

function decoderOf(name) {
  return name.startsWith('daemon.') ? decodeDaemonMessage : decodeExecutorMessage;
}

test('the fixture directory holds fixtures of both directions', () => {
  assert.ok(fixtureNames.some((n) => n.startsWith('daemon.')));
  assert.ok(fixtureNames.some((n) => n.startsWith('executor.')));
});

for (const name of fixtureNames) {
  test(`fixture ${name} decodes and re-encodes byte for byte`, () => {
    const text = fixture(name);
    const message = decoderOf(name)(text);
    assert.equal(message.v, 1);
    assert.equal(encodeMessage(message), text);
  });
}

test('every message type this side knows has a fixture', () => {
  const covered = new Set(fixtureNames.map((n) => JSON.parse(fixture(n)).type));
  for (const type of [...DAEMON_MESSAGE_TYPES, ...EXECUTOR_MESSAGE_TYPES]) assert.ok(covered.has(type), `no fixture for ${type}`);
});

test('decoding drops unknown fields and puts fields in canonical order', () => {
  const text = '{"type":"heartbeat","extra":1,"v":1}';
  assert.equal(encodeMessage(decodeExecutorMessage(text)), '{"v":1,"type":"heartbeat"}');
  const welcome = '{"heartbeatMs":20000,"v":1,"type":"welcome","protocol":1,"executorId":"e","messageBytesMax":5,"messagesPerSecondMax":7,"later":true}';
  assert.equal(encodeMessage(decodeDaemonMessage(welcome)),
    '{"v":1,"type":"welcome","protocol":1,"executorId":"e","heartbeatMs":20000,"messageBytesMax":5,"messagesPerSecondMax":7}');
});

function rejects(text, code, pattern, decode = decodeDaemonMessage) {
  assert.throws(() => decode(text), (e) => {
    assert.ok(e instanceof WireError, `expected a WireError, got ${e}`);
    assert.equal(e.code, code);
    assert.match(e.message, pattern);
    return true;
  });
}

test('malformed frames are rejected with a clear, typed error', () => {
  rejects('not json', 'MALFORMED', /not JSON/);
  rejects('[1,2]', 'MALFORMED', /expected an object/);
  rejects('{"type":"welcome"}', 'MALFORMED', /v: missing/);
  rejects('{"v":1,"type":"nonsense"}', 'MALFORMED', /unknown message type "nonsense"/);
  rejects('{"v":1}', 'MALFORMED', /type: expected a string/);
  rejects('{"v":1,"type":"hello"}', 'MALFORMED', /unknown message type "hello"/); // wrong direction
  const cmd = JSON.parse(fixture('daemon.command.json'));
  rejects(JSON.stringify({ ...cmd, commandId: 'cmd-x' }), 'MALFORMED', /command\.commandId: expected an id of the form cmd-<number>/);
  rejects(JSON.stringify({ ...cmd, workerId: 7 }), 'MALFORMED', /command\.workerId/);
  rejects(JSON.stringify({ ...cmd, kind: 'conversation.delete' }), 'MALFORMED', /command\.kind: expected one of/);
  rejects(JSON.stringify({ ...cmd, deadline: -1 }), 'MALFORMED', /command\.deadline: expected a whole number/);
  rejects(JSON.stringify({ ...cmd, deadline: 1.5 }), 'MALFORMED', /command\.deadline/);
  const { prompt, ...noPrompt } = cmd;
  rejects(JSON.stringify(noPrompt), 'MALFORMED', /command\.prompt: missing/);
  rejects('{"v":1,"type":"protocol.error","code":"WHATEVER","detail":""}', 'MALFORMED', /protocol\.error\.code/);
  rejects('{"v":1,"type":"operator.result","actionId":"a","ok":"yes"}', 'MALFORMED', /operator\.result\.ok: expected true or false/);
});

test('another version number is UNSUPPORTED_VERSION, a v that is not a number MALFORMED; an oversized frame is TOO_LARGE; a binary frame is MALFORMED', () => {
  rejects('{"v":2,"type":"welcome"}', 'UNSUPPORTED_VERSION', /unsupported protocol version 2/);
  rejects('{"v":"1","type":"welcome"}', 'MALFORMED', /v: must be a number.*"1"/);
  rejects(`{"v":1,"type":"heartbeat","pad":"${'x'.repeat(MESSAGE_BYTES_MAX)}"}`, 'TOO_LARGE', /more than 1048576 bytes/, decodeExecutorMessage);
  assert.throws(() => decodeDaemonMessage(new Uint8Array([1])), (e) => e.code === 'MALFORMED' && /text frame/.test(e.message));
});

test('an unknown error kind reads as generic; a kind on a state keeps its place', () => {
  const text = '{"v":1,"type":"conversation.state","workerId":"wrk-7","state":"error","errorKind":"new_kind","seq":3}';
  assert.equal(decodeExecutorMessage(text).errorKind, 'generic');
});

test('optional fields: null reads as absent, operator=false is omitted on encode', () => {
  const hello = JSON.parse(fixture('executor.hello.json'));
  hello.capabilities.operator = false;
  hello.bindings[1].observation = null;
  const encoded = encodeMessage(hello);
  assert.match(encoded, /"capabilities":\{"steering":true\}/);
  assert.doesNotMatch(encoded, /null/);
});

test('encoding validates: an outgoing message that does not fit is refused', () => {
  assert.throws(() => encodeMessage({ v: 1, type: 'operator.action', actionId: 'a'.repeat(65), action: 'resume', workerId: 'wrk-1' }),
    (e) => e.code === 'MALFORMED' && /longer than 64 bytes/.test(e.message));
  assert.throws(() => encodeMessage({ v: 1, type: 'operator.action', actionId: 'a', action: 'explode' }), /operator\.action\.action/);
  assert.throws(() => encodeMessage({ v: 1, type: 'hello', token: '', executorId: '', protocol: 1, capabilities: { steering: true }, concurrencyMax: 1, bindings: [], journal: [] }),
    /executorId: expected 1 to 128 printable ASCII/);
  assert.throws(() => encodeMessage({ v: 1, type: 'command.result', commandId: 'cmd-1', outcome: { status: 'submitted' } }),
    /outcome\.stateSeq: missing/);
});

test('the operator query pair: operator.query out, operator.data in (ok and error)', () => {
  assert.ok(fixtureNames.includes('daemon.operator.data.json'), 'the operator.data fixture is tested with the others');
  const query = { v: 1, type: 'operator.query', queryId: 'q-1', query: 'worker_attempts', workerId: 'wrk-7' };
  assert.equal(encodeMessage(query), '{"v":1,"type":"operator.query","queryId":"q-1","query":"worker_attempts","workerId":"wrk-7"}');
  assert.throws(() => encodeMessage({ ...query, query: 'everything' }), /operator\.query\.query/);
  const ok = '{"v":1,"type":"operator.data","queryId":"q-1","ok":true,"data":{"attempts":[{"attemptId":"exe-3"}]}}';
  assert.equal(encodeMessage(decodeDaemonMessage(ok)), ok);
  const refused = '{"v":1,"type":"operator.data","queryId":"q-2","ok":false,"error":{"code":"UNKNOWN_WORKER","message":"no worker wrk-99"}}';
  assert.deepEqual(decodeDaemonMessage(refused).error, { code: 'UNKNOWN_WORKER', message: 'no worker wrk-99' });
  rejects('{"v":1,"type":"operator.data","queryId":"q-3","ok":true,"data":[1]}', 'MALFORMED', /operator\.data\.data: expected an object/);
});

test('the version rule cases (fixtures/rules/version.json) get the same codes here', () => {
  const rule = JSON.parse(readFileSync(`${FIXTURES}rules/version.json`, 'utf8'));
  assert.ok(rule.cases.length >= 10);
  for (const { frame, code } of rule.cases) {
    for (const decode of [decodeExecutorMessage, decodeDaemonMessage]) {
      if (code === null) {
        if (decode === decodeExecutorMessage) assert.equal(decode(frame).type, 'heartbeat', frame);
        continue;
      }
      assert.throws(() => decode(frame), (e) => e instanceof WireError && e.code === code, `${frame} is ${code}`);
    }
  }
});
