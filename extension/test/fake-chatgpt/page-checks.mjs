// Checks of the fake page and of selectors.js together, without the extension: the page shows
// the shapes of chatgpt.com (the traps included) and computeFacts reads them as the README's
// `facts`. selectors.js is injected into the page with a one-line shim.
import { injectReaders, pollPage } from './harness.mjs';

const FACTS = () => globalThis.OrcSelectors.computeFacts(document);

async function openWithSelectors(page, url) {
  await page.goto(url);
  await injectReaders(page);
}

async function typeAsTheAdapterDoes(page, text) {
  await page.evaluate((value) => {
    const composer = document.querySelector('#prompt-textarea');
    composer.focus();
    const range = document.createRange();
    range.selectNodeContents(composer);
    getSelection().removeAllRanges();
    getSelection().addRange(range);
    document.execCommand('insertText', false, value);
  }, text);
}

async function send(page, text) {
  await typeAsTheAdapterDoes(page, text);
  await pollPage(page, () => globalThis.OrcSelectors.computeFacts(document).sendEnabled, null, 2_000, 'Send to enable');
  // One step inside the page: the page redraws every 100 ms, and a driver's click on a
  // node it located a moment earlier can miss a node that was just replaced.
  await page.evaluate(() => document.querySelector('button[data-testid="send-button"]').click());
}

const factsUntil = (page, predicateSource, what, timeoutMs = 5_000) => pollPage(page, (source) => {
  const facts = globalThis.OrcSelectors.computeFacts(document);
  return new Function('facts', `return (${source});`)(facts) ? facts : null;
}, predicateSource, timeoutMs, what);

export async function runPageChecks({ browser, server, tally }) {
  const { check, group } = tally;
  const page = await browser.newPage();
  let conversationId = null;

  await group('fresh page', async () => {
    await openWithSelectors(page, server.url);
    const facts = await factsUntil(page, 'facts.loaded', 'the page to load');
    check('fresh page: url is /', facts.url === server.url, facts.url);
    check('fresh page: composer, empty', facts.composer && !facts.composerText);
    check('fresh page: send present but disabled', facts.sendButton && !facts.sendEnabled);
    check('fresh page: no stop, no turns, no error', !facts.stopButton && facts.userTurns === 0 && facts.assistantTurns === 0 && facts.error === null);
    check('fresh page: no boundary', !facts.conversationFull && !facts.loginRequired && !facts.challenge && !facts.usageLimit);
    check('fresh page: not done, empty tail', !facts.lastAssistantDone && facts.lastAssistantTail === '');
  });

  await group('send needs an input event', async () => {
    await page.evaluate(() => { document.querySelector('#prompt-textarea').innerHTML = '<p>typed without an input event</p>'; });
    const facts = await page.evaluate(FACTS);
    check('text without an input event: Send stays disabled', facts.composerText && !facts.sendEnabled);
    await typeAsTheAdapterDoes(page, 'now with one');
    const typed = await factsUntil(page, 'facts.sendEnabled', 'Send to enable');
    check('execCommand insertText enables Send', typed.sendEnabled && typed.composerText);
    await page.evaluate(() => { document.querySelector('#prompt-textarea').innerHTML = '<p><br></p>'; document.querySelector('#prompt-textarea').dispatchEvent(new InputEvent('input', { bubbles: true })); });
  });

  await group('first send', async () => {
    server.setPlan(() => ({ generateMs: 1_500, reply: 'First reply.\n\nSTATUS: done' }));
    const prompt = 'line one\nline two\n\n[attempt exe-1]';
    await send(page, prompt);
    const generating = await factsUntil(page, "facts.stopButton && facts.url.includes('/c/')", 'generating facts at /c/<uuid>');
    conversationId = new URL(generating.url).pathname.split('/')[2];
    check('send: URL becomes /c/<uuid>', /^[0-9a-f-]{36}$/.test(conversationId), generating.url);
    check('send: generating facts', generating.stopButton && !generating.sendButton && generating.userTurns === 1 && generating.assistantTurns === 1);
    check('send: not done while generating', !generating.lastAssistantDone && generating.lastAssistantTail === '');
    await server.waitFor(() => server.prompts.length === 1, 2_000, 'the prompt');
    check('send: the server got the exact multi-line prompt', server.prompts[0].text === prompt && !server.prompts[0].steer, JSON.stringify(server.prompts[0]));
    check('send: the click was recorded', server.clicks.some((click) => click.testid === 'send-button'));
    const idle = await factsUntil(page, 'facts.lastAssistantDone', 'the turn to finish');
    check('turn end: idle facts', !idle.stopButton && idle.sendButton && !idle.sendEnabled && idle.error === null);
    check('turn end: tail of the reply', idle.lastAssistantTail.endsWith('STATUS: done') && idle.lastAssistantTail.startsWith('First reply.'), JSON.stringify(idle.lastAssistantTail));
  });

  await group('reload mid-generation', async () => {
    server.setPlan(() => ({ generateMs: 2_500, reply: 'second' }));
    await send(page, 'second prompt [attempt exe-2]');
    await factsUntil(page, 'facts.stopButton && facts.userTurns === 2', 'the second turn to generate');
    await page.reload();
    await injectReaders(page);
    const reloaded = await factsUntil(page, 'facts.userTurns === 2', 'the turns after reload');
    check('reload: turns rendered again, still generating', reloaded.stopButton && reloaded.assistantTurns === 2 && !reloaded.lastAssistantDone);
    const done = await factsUntil(page, 'facts.lastAssistantDone', 'the reloaded turn to finish', 5_000);
    check('reload: the turn finishes after its remaining time', done.lastAssistantTail === 'second');
  });

  await group('delivery timeout', async () => {
    server.setPlan(() => ({ generateMs: 200, error: 'delivery_timeout' }));
    await send(page, 'third [attempt exe-3]');
    const failed = await factsUntil(page, "facts.error !== null", 'the delivery-timeout card');
    check('delivery timeout: error.kind', failed.error.kind === 'delivery_timeout', JSON.stringify(failed.error));
    check('delivery timeout: card text without Retry', failed.error.text === 'Message delivery timed out. Please try again.', failed.error.text);
    check('delivery timeout: idle otherwise, no action bar', !failed.stopButton && !failed.lastAssistantDone);
    const promptsBefore = server.prompts.length;
    // Inside the page, as for Send: the page redraws every 100 ms under the driver.
    await page.evaluate(() => document.querySelector('button[data-testid="regenerate-thread-error-button"]').click());
    await server.waitFor(() => server.clicks.some((click) => click.testid === 'regenerate-thread-error-button'), 2_000, 'the Retry click');
    check('Retry click recorded in clicks', true);
    check('Retry does nothing else', server.prompts.length === promptsBefore);
  });

  await group('stale card behind a newer turn', async () => {
    server.setPlan(() => ({ generateMs: 200, reply: 'recovered' }));
    await send(page, 'continue [attempt exe-4]');
    const facts = await factsUntil(page, "facts.lastAssistantDone && facts.userTurns === 4", 'the newer turn');
    check('stale card: error is null', facts.error === null, JSON.stringify(facts.error));
    check('stale card: tail is the newer reply', facts.lastAssistantTail === 'recovered');
  });

  await group('model text is not page state', async () => {
    server.setPlan(() => ({ generateMs: 100, reply: "Something went wrong. Please try again.\nYou've reached the maximum length for this conversation." }));
    await send(page, 'quote the errors [attempt exe-45]');
    const facts = await factsUntil(page, 'facts.lastAssistantDone && facts.userTurns === 5', 'the quoting turn');
    check('a reply quoting error texts: no error, not full', facts.error === null && !facts.conversationFull, JSON.stringify(facts));
  });

  await group('something went wrong', async () => {
    server.setPlan(() => ({ generateMs: 100, error: 'something_went_wrong' }));
    await send(page, 'fifth [attempt exe-5]');
    const facts = await factsUntil(page, 'facts.error !== null', 'the failed send');
    check('failed send: error on the user turn', facts.error.kind === 'something_went_wrong' && facts.userTurns === facts.assistantTurns + 1, JSON.stringify(facts));
    check('failed send: the latest turn is the user\'s', !facts.latestIsAssistant, JSON.stringify(facts));
    server.setPlan(() => ({ generateMs: 100, reply: 'Recovered.' }));
    await send(page, 'sixth [attempt exe-6]');
    const answered = await factsUntil(page, "facts.lastAssistantDone && facts.lastAssistantTail.includes('Recovered')", 'the answer after the failed send');
    check('after a failed send: the answered turn is the latest, the orphan user turn stays in history',
      answered.latestIsAssistant && answered.error === null && answered.userTurns === answered.assistantTurns + 1, JSON.stringify(answered));
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
    await send(page, 'sixth [attempt exe-6]');
    const generating = await factsUntil(page, 'facts.stopButton && facts.sendButton', 'Stop and Send together');
    check('steerable turn: stop and send together', generating.stopButton && generating.sendButton && !generating.sendEnabled);
    await send(page, 'steer now [attempt exe-7]');
    await server.waitFor(() => server.prompts.at(-1).steer, 2_000, 'the steering prompt');
    const steered = await page.evaluate(FACTS);
    check('steering: recorded with steer:true', server.prompts.at(-1).text === 'steer now [attempt exe-7]');
    check('steering: the turn goes on, turns still alternate', steered.stopButton
      && steered.userTurns === generating.userTurns + 1 && steered.assistantTurns === generating.assistantTurns + 1, JSON.stringify(steered));
    const done = await factsUntil(page, 'facts.lastAssistantDone', 'the steered turn to finish');
    check('steering: the reply comes after the steering prompt', done.lastAssistantTail === 'steered reply'
      && await page.evaluate(() => document.querySelector('#thread').lastElementChild.dataset.turn === 'assistant'));
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
