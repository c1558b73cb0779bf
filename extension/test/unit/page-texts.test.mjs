// The page texts' reset-time reader (src/platform/page-texts.js, a classic content script,
// loaded here into a fresh context): the times usage-limit notices name, in the forms real
// notices use (test/fixtures/pages/locales/LOCALES.md), and the next moment they stand for;
// and the white space the readers count when they bound a text before normalizing it.
import test from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import vm from 'node:vm';

const context = vm.createContext({});
vm.runInContext(readFileSync(new URL('../../src/platform/page-texts.js', import.meta.url), 'utf8'), context);
const { readResetTime, resetAtMs, matchesAny, matchesWhole, isWhitespace, normalizeText } = context.OrcPageTexts;
const plain = (value) => JSON.parse(JSON.stringify(value));

test('reset times as the notices write them', () => {
  const cases = [
    ['Responses will use another model until your limit resets after 4:04 PM.', { hour: 16, minute: 4, dayOffset: 0 }],
    ['until usage resets at 3:42 PM. Continue chatting with text only', { hour: 15, minute: 42, dayOffset: 0 }],
    ['resets after 12:05 AM', { hour: 0, minute: 5, dayOffset: 0 }],
    ['制限が明日の9:40以降にリセットされる', { hour: 9, minute: 40, dayOffset: 1 }],
    ['午後4:04にリセット', { hour: 16, minute: 4, dayOffset: 0 }],
    ['下午4:04', { hour: 16, minute: 4, dayOffset: 0 }],
    ['try again after 16:04', { hour: 16, minute: 4, dayOffset: 0 }],
    ['You can try again tomorrow at 9:00 AM', { hour: 9, minute: 0, dayOffset: 1 }],
    ['Your limit resets in 3 hours', { inMs: 3 * 3_600_000 }],
  ];
  for (const [text, expected] of cases) assert.deepEqual(plain(readResetTime(text)), expected, text);
});

test('a notice naming no time this reader knows has no reset time', () => {
  for (const text of ['You have reached your limit', 'resets on December 8', 'after 25:99', 'after 13:04 PM']) {
    assert.equal(readResetTime(text), null, text);
  }
});

test('a reset time stands for its next occurrence, never the past', () => {
  const now = new Date(2026, 10, 20, 15, 0, 0);
  const today = new Date(2026, 10, 20, 16, 4, 0).getTime();
  assert.equal(resetAtMs({ hour: 16, minute: 4, dayOffset: 0 }, now), today);
  assert.equal(resetAtMs({ hour: 9, minute: 0, dayOffset: 0 }, now), new Date(2026, 10, 21, 9, 0, 0).getTime());
  assert.equal(resetAtMs({ hour: 16, minute: 4, dayOffset: 1 }, now), new Date(2026, 10, 21, 16, 4, 0).getTime());
  assert.equal(resetAtMs({ inMs: 60_000 }, now), now.getTime() + 60_000);
  assert.equal(resetAtMs(null, now), null);
});

test('a notice inside a reply counts only whole: quoting it is not the notice', () => {
  assert.equal(matchesWhole('deliveryTimeout', 'Message delivery timed out. Please try again.'), true);
  assert.equal(matchesWhole('somethingWentWrong', 'Something went wrong with the build, so I retried it.'), false);
  assert.equal(matchesAny('somethingWentWrong', 'Something went wrong with the build, so I retried it.'), true);
  assert.equal(matchesWhole('conversationFull', "You've reached the maximum length for this conversation, but you can keep talking by starting a new chat."), true);
});

test('isWhitespace is exactly what normalizeText collapses (\\s), for every UTF-16 code unit', () => {
  for (let code = 0; code <= 0xffff; code += 1) {
    assert.equal(isWhitespace(code), /\s/.test(String.fromCharCode(code)), `U+${code.toString(16).padStart(4, '0')}`);
  }
  // Normalizing keeps every other character, so a text with more than N of them normalizes to more than N.
  assert.equal(normalizeText('  a\u00a0\u2003b \u2019c\n'), "a b 'c");
});

test('normalizeText returns a text already normalized as it is, and normalizes every other one', () => {
  // The slow form normalizeText stands for: curly apostrophes straightened, white space collapsed and trimmed.
  const slow = (text) => text.replace(/[\u2018\u2019\u02bc]/g, "'").replace(/\s+/g, ' ').trim();
  const pieces = ['a', 'b', ' ', '  ', '\n', '\u00a0', '\u3000', '\u2019', '\u2018', '\u02bc', "'", '\t', 'x y'];
  const texts = [''];
  for (const first of pieces) for (const second of pieces) for (const third of pieces) texts.push(first + second + third);
  for (const text of texts) assert.equal(normalizeText(text), slow(text), JSON.stringify(text));
  const clean = 'Something went wrong. Please try again.';
  assert.equal(normalizeText(clean), clean);
});

// The texts the sources found (test/fixtures/pages/locales/locale-texts.json): every verified
// text of a concept the adapter reads by its words is read as that concept, in every locale
// listed there. Left out, each with its reason: texts of a concept this reader does not read
// (a dialog's second line, a label of a chip that is no Retry) and template texts with an
// ellipsis for the app's name. A challenge's texts are its page's title or its words.
test('every verified text of the locale sources is read as its concept', () => {
  const sources = JSON.parse(readFileSync(new URL('../fixtures/pages/locales/locale-texts.json', import.meta.url), 'utf8'));
  const READ_AS = { challenge: ['challenge', 'challengeTitle'] };
  const NOT_READ = new Set([
    'retryLabel/zh-CN/点击以重试', // Deep Research's chip ("click to retry"), not the failed turn's Retry
    'tooManyRequests/en/Please wait a few minutes before trying again.', // the dialog's second line: its title is read
    'tooManyRequests/zh-CN/请稍等几分钟后再重试', // the same line in zh-CN
    'conversationFull/ko/새 채팅을 시작해 계속 이야기할 수 있습니다', // the notice's second half: its first is read
    'approvalTitle/pt-BR/Permitir que o ChatGPT use …', // an ellipsis for the name (the full template is read)
  ]);
  const { TEXTS } = context.OrcPageTexts;
  let read = 0;
  for (const [concept, perLocale] of Object.entries(sources)) {
    const as = READ_AS[concept] ?? [concept];
    if (concept.startsWith('_') || !as.every((name) => name in TEXTS)) continue;
    for (const [locale, entries] of Object.entries(perLocale)) {
      for (const entry of entries) {
        if (!entry.verified || NOT_READ.has(`${concept}/${locale}/${entry.text}`)) continue;
        const text = normalizeText(entry.kind === 'template' ? entry.text.replace('<App>', 'Orchestrator') : entry.text);
        assert.ok(as.some((name) => matchesAny(name, text)), `${concept} (${locale}): ${entry.text}`);
        read += 1;
      }
    }
  }
  assert.ok(read >= 100, `${read} texts read`);
  // Stopped thinking: one text per locale ChatGPT ships (65 codes, some sharing a text).
  assert.ok(Object.keys(sources.stoppedThinking).length >= 60);
});
