// Checks of the fake page and of selectors.js together, without the extension, in every
// layout profile of the real page (layouts/profiles.mjs REAL_LAYOUTS; each gets its own fake
// server): the page shows the shapes of chatgpt.com in that layout (the traps included) and
// computeFacts reads them as the README's `facts`. The readers are injected into the page.
import { injectReaders, pollPage } from './harness.mjs';
import { startFakeChatGPT } from './server.mjs';
import { REAL_LAYOUTS, profileOf } from './layouts/profiles.mjs';

const FACTS = () => globalThis.OrcSelectors.computeFacts(document);

export async function openWithSelectors(page, url) {
  await page.goto(url);
  await injectReaders(page);
}

// A textarea through its prototype's value setter and an input event, a contenteditable
// through execCommand: as content.js types.
async function typeAsTheAdapterDoes(page, profile, text) {
  await page.evaluate(([selector, value]) => {
    const composer = document.querySelector(selector);
    composer.focus();
    if (composer.tagName === 'TEXTAREA') {
      Object.getOwnPropertyDescriptor(HTMLTextAreaElement.prototype, 'value').set.call(composer, value);
      composer.dispatchEvent(new Event('input', { bubbles: true }));
      return;
    }
    const range = document.createRange();
    range.selectNodeContents(composer);
    getSelection().removeAllRanges();
    getSelection().addRange(range);
    document.execCommand('insertText', false, value);
  }, [profile.composer, text]);
}

// Sets the composer's content the way no keyboard does: no input event.
const setWithoutInputEvent = (page, profile, text) => page.evaluate(([selector, value]) => {
  const composer = document.querySelector(selector);
  if (composer.tagName === 'TEXTAREA') composer.value = value;
  else composer.innerHTML = value === '' ? '<p><br></p>' : `<p>${value}</p>`;
}, [profile.composer, text]);

const clearWithInputEvent = (page, profile) => page.evaluate((selector) => {
  const composer = document.querySelector(selector);
  if (composer.tagName === 'TEXTAREA') composer.value = '';
  else composer.innerHTML = '<p><br></p>';
  composer.dispatchEvent(new InputEvent('input', { bubbles: true }));
}, profile.composer);

// The enabled send control (the steering one while a turn generates).
const clickSend = (page, profile) => page.evaluate((selector) => {
  const button = [...document.querySelectorAll(selector)].find((b) => !b.disabled && b.getAttribute('aria-disabled') !== 'true'
    && !b.hasAttribute('data-stop-generating') && b.getAttribute('data-testid') !== 'stop-button');
  button.click();
}, profile.send);

export async function send(page, profile, text) {
  await typeAsTheAdapterDoes(page, profile, text);
  await pollPage(page, () => globalThis.OrcSelectors.computeFacts(document).sendEnabled, null, 2_000, 'Send to enable');
  // One step inside the page: the page redraws every 100 ms, and a driver's click on a
  // node it located a moment earlier can miss a node that was just replaced.
  await clickSend(page, profile);
}

export const factsUntil = (page, predicateSource, what, timeoutMs = 5_000) => pollPage(page, (source) => {
  const facts = globalThis.OrcSelectors.computeFacts(document);
  return new Function('facts', `return (${source});`)(facts) ? facts : null;
}, predicateSource, timeoutMs, what);

export async function runPageChecks({ browser, server, tally }) {
  // The layouts run side by side, each in its own page and server: the checks wait on page
  // events, not on wall time, so they do not disturb one another, and the run takes about
  // as long as one layout's.
  await Promise.all(REAL_LAYOUTS.map(async (layout) => {
    const own = server.layout === layout ? server : await startFakeChatGPT({ layout });
    try {
      await checkLayout({ browser, server: own, tally: prefixed(tally, layout), layout });
    } finally {
      if (own !== server) await own.close();
    }
  }));
}

/** The tally with every check and group named after `layout`. */
export function prefixed(tally, layout) {
  return {
    check: (name, ok, detail) => tally.check(`${layout}: ${name}`, ok, detail),
    group: (name, body) => tally.group(`${layout}: ${name}`, body),
  };
}

async function checkLayout({ browser, server, tally, layout }) {
  const { check, group } = tally;
  const profile = profileOf(layout);
  const page = await browser.newPage();
  let conversationId = null;
  // What the submit slot of an empty, idle composer holds: a disabled send button
  // (transcript) or none at all (a voice button in the classic layouts).
  const idleSlot = (facts) => (profile.sendWhileEmpty ? facts.sendButton && !facts.sendEnabled : !facts.sendButton);
  // How many user turns stand without an answer after a failure (profile.failuresWithoutAnswer).
  let unanswered = 0;
  // While a turn generates its answer may not show yet (the app shell draws it with its
  // first words): every other user turn has its answer, the latest one may still be to come.
  const answersWhileGenerating = (facts) => facts.assistantTurns + unanswered === facts.userTurns
    || (!profile.answerBeforeText && facts.assistantTurns + unanswered === facts.userTurns - 1);
  // Whether the facts show a failure of `kind` the way the layout draws it: as the latest
  // assistant turn (no action bar), or on the user's turn without one (counted in `unanswered`
  // by the caller first).
  const failedTurnShape = (facts, kind) => (profile.failuresWithoutAnswer.includes(kind)
    ? !facts.latestIsAssistant : facts.latestIsAssistant && !facts.lastAssistantDone)
    && facts.userTurns === facts.assistantTurns + unanswered;
  const countFailure = (kind) => {
    if (profile.failuresWithoutAnswer.includes(kind)) unanswered += 1;
  };

  await group('fresh page', async () => {
    await openWithSelectors(page, server.url);
    const facts = await factsUntil(page, 'facts.loaded', 'the page to load');
    check('fresh page: url is /', facts.url === server.url, facts.url);
    check('fresh page: composer, empty, editable', facts.composer && !facts.composerText && facts.missing.length === 0, JSON.stringify(facts.missing));
    check(profile.sendWhileEmpty ? 'fresh page: send present but disabled' : 'fresh page: no send button (the slot holds the voice button)', idleSlot(facts), JSON.stringify(facts));
    check('fresh page: no stop, no turns, no error', !facts.stopButton && facts.userTurns === 0 && facts.assistantTurns === 0 && facts.error === null);
    check('fresh page: no boundary', !facts.conversationFull && !facts.challenge && !facts.usageLimit);
    check(profile.loggedOut ? 'fresh page: a logged-out new chat reads as login required' : 'fresh page: signed in, no login required',
      facts.loginRequired === profile.loggedOut, JSON.stringify(facts));
    check('fresh page: not done, empty tail', !facts.lastAssistantDone && facts.lastAssistantTail === '');
  });

  await group('send needs an input event', async () => {
    await setWithoutInputEvent(page, profile, 'typed without an input event');
    const facts = await page.evaluate(FACTS);
    check('text without an input event: no enabled Send', facts.composerText && !facts.sendEnabled && idleSlot(facts), JSON.stringify(facts));
    await typeAsTheAdapterDoes(page, profile, 'now with one');
    const typed = await factsUntil(page, 'facts.sendEnabled', 'Send to enable');
    check('typing as the adapter does brings an enabled Send', typed.sendEnabled && typed.composerText);
    await clearWithInputEvent(page, profile);
    check('emptied again: the slot as on a fresh page', idleSlot(await factsUntil(page, '!facts.composerText', 'the composer to empty')));
  });

  await group('first send', async () => {
    server.setPlan(() => ({ generateMs: 1_500, reply: 'First reply.\n\nSTATUS: done' }));
    const prompt = 'line one\nline two\n\n[attempt exe-1]';
    await send(page, profile, prompt);
    const generating = await factsUntil(page, `facts.stopButton && facts.url.includes(${JSON.stringify(profile.conversationPrefix)})`, `generating facts at ${profile.conversationPrefix}<uuid>`);
    conversationId = new URL(generating.url).pathname.split('/')[2];
    check(`send: URL becomes ${profile.conversationPrefix}<uuid>`, /^[0-9a-f-]{36}$/.test(conversationId) && generating.url === server.conversationUrl(conversationId), generating.url);
    check('send: generating facts', generating.stopButton && !generating.sendButton && generating.userTurns === 1 && answersWhileGenerating(generating), JSON.stringify(generating));
    check('send: the layout is named', generating.layout === layout, generating.layout);
    check(profile.loggedOut ? 'send: a logged-out conversation reads as login required, and is read' : 'send: signed in, the conversation is readable',
      generating.loginRequired === profile.loggedOut && generating.missing.length === 0, JSON.stringify(generating));
    check('send: not done while generating', !generating.lastAssistantDone && generating.lastAssistantTail === '');
    await server.waitFor(() => server.prompts.length === 1, 2_000, 'the prompt');
    check('send: the server got the exact multi-line prompt', server.prompts[0].text === prompt && !server.prompts[0].steer, JSON.stringify(server.prompts[0]));
    check('send: the click was recorded as Send', server.clicks.some((click) => click.control === 'send'), JSON.stringify(server.clicks));
    const stopGone = await factsUntil(page, '!facts.stopButton', 'Stop to go away');
    const idle = await factsUntil(page, 'facts.lastAssistantDone', 'the turn to finish');
    check('turn end: Stop goes first, the action bar follows', stopGone.userTurns === 1 && idle.userTurns === 1);
    check('turn end: idle facts', !idle.stopButton && idleSlot(idle) && idle.error === null && idle.latestIsAssistant, JSON.stringify(idle));
    check('turn end: tail of the reply', idle.lastAssistantTail.endsWith('STATUS: done') && idle.lastAssistantTail.startsWith('First reply.'), JSON.stringify(idle.lastAssistantTail));
  });

  await group('reload mid-generation', async () => {
    server.setPlan(() => ({ generateMs: 2_500, reply: 'second' }));
    await send(page, profile, 'second prompt [attempt exe-2]');
    await factsUntil(page, 'facts.stopButton && facts.userTurns === 2', 'the second turn to generate');
    await page.reload();
    await injectReaders(page);
    const reloaded = await factsUntil(page, 'facts.userTurns === 2', 'the turns after reload');
    check('reload: turns rendered again, still generating', reloaded.stopButton && answersWhileGenerating(reloaded)
      && !(reloaded.latestIsAssistant && reloaded.lastAssistantDone), JSON.stringify(reloaded));
    // The latest answer's own bar: the app shell draws an answer only with its first words, and
    // until then the finished answer before it is the last one on the page.
    const done = await factsUntil(page, 'facts.lastAssistantDone && facts.latestIsAssistant', 'the reloaded turn to finish', 5_000);
    check('reload: the turn finishes after its remaining time', done.lastAssistantTail === 'second');
  });

  await group('delivery timeout', async () => {
    server.setPlan(() => ({ generateMs: 200, error: 'delivery_timeout' }));
    await send(page, profile, 'third [attempt exe-3]');
    const failed = await factsUntil(page, "facts.error !== null", 'the delivery-timeout card');
    check('delivery timeout: error.kind', failed.error.kind === 'delivery_timeout', JSON.stringify(failed.error));
    check('delivery timeout: card text without Retry', failed.error.text === 'Message delivery timed out. Please try again.', failed.error.text);
    check('delivery timeout: Retry recognised', failed.error.retry === true, JSON.stringify(failed.error));
    countFailure('delivery_timeout');
    check('delivery timeout: idle otherwise, no action bar', !failed.stopButton && failedTurnShape(failed, 'delivery_timeout'), JSON.stringify(failed));
    const promptsBefore = server.prompts.length;
    // Inside the page, as for Send: the page redraws every 100 ms under the driver.
    await page.evaluate((selector) => document.querySelector(selector).click(), profile.retry);
    await server.waitFor(() => server.clicks.some((click) => click.control === 'retry'), 2_000, 'the Retry click');
    check('Retry click recorded in clicks', true);
    check('Retry does nothing else', server.prompts.length === promptsBefore);
  });

  await group('stale card behind a newer turn', async () => {
    server.setPlan(() => ({ generateMs: 200, reply: 'recovered' }));
    await send(page, profile, 'continue [attempt exe-4]');
    const facts = await factsUntil(page, "facts.lastAssistantDone && facts.userTurns === 4", 'the newer turn');
    check('stale card: error is null', facts.error === null, JSON.stringify(facts.error));
    check('stale card: tail is the newer reply', facts.lastAssistantTail === 'recovered');
  });

  await group('model text is not page state', async () => {
    server.setPlan(() => ({ generateMs: 100, reply: "Something went wrong. Please try again.\nYou've reached the maximum length for this conversation." }));
    await send(page, profile, 'quote the errors [attempt exe-45]');
    const facts = await factsUntil(page, 'facts.lastAssistantDone && facts.userTurns === 5', 'the quoting turn');
    check('a reply quoting error texts: no error, not full', facts.error === null && !facts.conversationFull, JSON.stringify(facts));
  });

  await group('something went wrong', async () => {
    server.setPlan(() => ({ generateMs: 100, error: 'something_went_wrong' }));
    await send(page, profile, 'fifth [attempt exe-5]');
    const facts = await factsUntil(page, 'facts.error !== null', 'the failed send');
    countFailure('something_went_wrong');
    const onUserTurn = profile.failuresWithoutAnswer.includes('something_went_wrong');
    check(onUserTurn ? 'failed send: the error on the user\'s turn, the latest, with no answer' : 'failed turn: the failure card is the latest assistant turn, with Retry',
      facts.error.kind === 'something_went_wrong' && facts.error.retry && failedTurnShape(facts, 'something_went_wrong'), JSON.stringify(facts));
    server.setPlan(() => ({ generateMs: 100, reply: 'Recovered.' }));
    await send(page, profile, 'sixth [attempt exe-6]');
    const answered = await factsUntil(page, "facts.lastAssistantDone && facts.lastAssistantTail.includes('Recovered')", 'the answer after the failed send');
    check('after a failed turn: the answered turn is the latest, the failure stays in history',
      answered.latestIsAssistant && answered.error === null
      && answered.userTurns === answered.assistantTurns + unanswered, JSON.stringify(answered));
  });

  await group('draft', async () => {
    await server.control(conversationId, 'draft:a person is typing');
    const drafted = await page.evaluate(FACTS);
    check('draft: composerText', drafted.composerText && drafted.sendEnabled);
    await server.control(conversationId, 'clear-draft');
    const cleared = await page.evaluate(FACTS);
    check('clear-draft: composer empty again', !cleared.composerText && !cleared.sendEnabled);
  });

  await group('steering', async () => {
    server.setPlan(() => ({ generateMs: 2_500, reply: 'steered reply', steerable: true }));
    await send(page, profile, 'sixth [attempt exe-6]');
    const generating = await factsUntil(page, 'facts.stopButton && facts.sendButton', 'Stop and Send together');
    check('steerable turn: stop and send together', generating.stopButton && generating.sendButton && !generating.sendEnabled);
    await send(page, profile, 'steer now [attempt exe-7]');
    await server.waitFor(() => server.prompts.at(-1).steer, 2_000, 'the steering prompt');
    const steered = await page.evaluate(FACTS);
    check('steering: recorded with steer:true', server.prompts.at(-1).text === 'steer now [attempt exe-7]');
    check('steering: the turn goes on, turns still alternate', steered.stopButton
      && steered.userTurns === generating.userTurns + 1 && answersWhileGenerating(steered), JSON.stringify(steered));
    const done = await factsUntil(page, 'facts.lastAssistantDone', 'the steered turn to finish');
    check('steering: the reply comes after the steering prompt', done.lastAssistantTail === 'steered reply' && done.latestIsAssistant, JSON.stringify(done));
  });

  await group('conversation full', async () => {
    await server.control(conversationId, 'full');
    check('full: conversationFull', (await page.evaluate(FACTS)).conversationFull);
    await page.reload();
    await injectReaders(page);
    const reloaded = await factsUntil(page, 'facts.userTurns > 0', 'the turns after reload');
    check('full: still full after reload', reloaded.conversationFull);
  });

  await group('stale stop', async () => {
    await server.control(conversationId, 'stale-stop');
    const facts = await page.evaluate(FACTS);
    check('stale stop: stop control and a something-went-wrong card', facts.stopButton && facts.error?.kind === 'something_went_wrong', JSON.stringify(facts));
    check('stale stop: no send offered', !facts.sendButton, JSON.stringify(facts));
  });

  await group('break-ui', async () => {
    await server.control(conversationId, 'break-ui');
    const facts = await page.evaluate(FACTS);
    check('break-ui: no composer, no send', !facts.composer && !facts.sendButton);
  });

  await group('new chat control', async () => {
    await openWithSelectors(page, server.url);
    await server.control(null, 'draft:draft in a new chat');
    check('control reaches a page at /', (await page.evaluate(FACTS)).composerText);
  });

  await page.close();
}
