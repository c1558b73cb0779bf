// Settings defaults and validation; conversation URL rules.

import test from 'node:test';
import assert from 'node:assert/strict';
import { DAEMON_URLS_MAX, mergeSettings, newExecutorId, SETTINGS_DEFAULTS } from '../../src/core/settings.js';
import { conversationUrlOf, sameConversation, onChatOrigin } from '../../src/core/urls.js';

test('defaults: the local daemon, no token, 4 concurrent commands, 8 managed tabs, chatgpt.com', () => {
  assert.deepEqual(mergeSettings(undefined, {}).settings, SETTINGS_DEFAULTS);
  assert.deepEqual(SETTINGS_DEFAULTS.daemonUrls, ['ws://127.0.0.1:7411/executor']);
  assert.equal(newExecutorId('a1b2'), 'ext-a1b2');
});

test('a patch is validated field by field; a bad field keeps the old value and is reported', () => {
  const base = { ...SETTINGS_DEFAULTS, executorId: 'ext-1', token: 't' };
  const { settings, errors } = mergeSettings(base, { token: '  new  ', concurrencyMax: 99, daemonUrls: 'http://x', chatBaseUrl: 'http://127.0.0.1:9/', junk: 1 });
  assert.equal(settings.token, 'new');
  assert.equal(settings.concurrencyMax, 4);
  assert.deepEqual(settings.daemonUrls, SETTINGS_DEFAULTS.daemonUrls);
  assert.equal(settings.chatBaseUrl, 'http://127.0.0.1:9/');
  assert.equal('junk' in settings, false);
  assert.deepEqual(Object.keys(errors).sort(), ['concurrencyMax', 'daemonUrls']);
});

test('several daemon URLs: one per line (or commas), kept in order; each wrong one is named', () => {
  const typed = ' ws://10.0.0.5:7411/executor\n\nwss://o.example/executor, ws://10.0.0.7:7411/executor \n';
  const { settings, errors } = mergeSettings(SETTINGS_DEFAULTS, { daemonUrls: typed });
  assert.deepEqual(errors, {});
  assert.deepEqual(settings.daemonUrls, ['ws://10.0.0.5:7411/executor', 'wss://o.example/executor', 'ws://10.0.0.7:7411/executor']);
  const said = (daemonUrls) => mergeSettings(SETTINGS_DEFAULTS, { daemonUrls }).errors.daemonUrls;
  assert.equal(said('ws://a/executor\nhttp://b/mcp'), `daemonUrls: expected 1 to ${DAEMON_URLS_MAX} different ws:// or wss:// URLs, one per line (http://b/mcp is not one)`);
  assert.match(said('ws://a/executor ws://a/executor'), /\(ws:\/\/a\/executor is there twice\)$/);
  assert.match(said('  '), /\(0 given\)$/);
  assert.match(said(Array.from({ length: DAEMON_URLS_MAX + 1 }, (_, i) => `ws://h${i}/executor`)), /\(9 given\)$/);
  assert.equal(said(['ws://a/executor', 'ws://b/executor']), undefined, 'a list as stored is read as it is');
});

test('settings from before the list: a stored or configured daemonUrl is read as a list of one', () => {
  const stored = { daemonUrl: 'ws://10.0.0.5:7411/executor', token: 't', executorId: 'ext-1' };
  const { settings } = mergeSettings(stored, {});
  assert.deepEqual(settings.daemonUrls, ['ws://10.0.0.5:7411/executor']);
  assert.equal('daemonUrl' in settings, false, 'stored again as daemonUrls');
  assert.equal(settings.token, 't');
  const configured = mergeSettings({}, { daemonUrl: 'ws://127.0.0.1:9/executor' });
  assert.deepEqual(configured.settings.daemonUrls, ['ws://127.0.0.1:9/executor']);
  assert.deepEqual(mergeSettings({}, { daemonUrl: 'http://x' }).errors.daemonUrls.split(': ')[0], 'daemonUrls');
  assert.deepEqual(mergeSettings({ daemonUrl: 'junk' }, {}).settings.daemonUrls, SETTINGS_DEFAULTS.daemonUrls, 'a wrong stored one is dropped');
});

test('conversation URLs: /c/<id>, query and fragment ignored, other pages are not conversations', () => {
  assert.equal(conversationUrlOf('https://chatgpt.com/c/6a1f?model=x#y'), 'https://chatgpt.com/c/6a1f');
  assert.equal(conversationUrlOf('https://chatgpt.com/g/g-abc/c/6a1f/'), 'https://chatgpt.com/g/g-abc/c/6a1f');
  assert.equal(conversationUrlOf('https://chatgpt.com/'), null);
  assert.equal(conversationUrlOf('nonsense'), null);
  assert.equal(sameConversation('https://chatgpt.com/c/6a1f', 'https://chatgpt.com/c/6a1f?x=1'), true);
  assert.equal(sameConversation('https://chatgpt.com/c/6a1f', 'https://chatgpt.com/c/6a1'), false);
  assert.equal(sameConversation('', ''), false);
  assert.equal(onChatOrigin('https://chatgpt.com/c/1', 'https://chatgpt.com/'), true);
  assert.equal(onChatOrigin('https://evil.example/c/1', 'https://chatgpt.com/'), false);
});
