// Settings defaults and validation; conversation URL rules.

import test from 'node:test';
import assert from 'node:assert/strict';
import { mergeSettings, newExecutorId, SETTINGS_DEFAULTS } from '../../src/core/settings.js';
import { conversationUrlOf, sameConversation, onChatOrigin } from '../../src/core/urls.js';

test('defaults: the local daemon, no token, 4 concurrent commands, 8 managed tabs, chatgpt.com', () => {
  assert.deepEqual(mergeSettings(undefined, {}).settings, SETTINGS_DEFAULTS);
  assert.equal(SETTINGS_DEFAULTS.daemonUrl, 'ws://127.0.0.1:7411/executor');
  assert.equal(newExecutorId('a1b2'), 'ext-a1b2');
});

test('a patch is validated field by field; a bad field keeps the old value and is reported', () => {
  const base = { ...SETTINGS_DEFAULTS, executorId: 'ext-1', token: 't' };
  const { settings, errors } = mergeSettings(base, { token: '  new  ', concurrencyMax: 99, daemonUrl: 'http://x', chatBaseUrl: 'http://127.0.0.1:9/', junk: 1 });
  assert.equal(settings.token, 'new');
  assert.equal(settings.concurrencyMax, 4);
  assert.equal(settings.daemonUrl, SETTINGS_DEFAULTS.daemonUrl);
  assert.equal(settings.chatBaseUrl, 'http://127.0.0.1:9/');
  assert.equal('junk' in settings, false);
  assert.deepEqual(Object.keys(errors).sort(), ['concurrencyMax', 'daemonUrl']);
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
