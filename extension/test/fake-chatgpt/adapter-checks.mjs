// Checks of content.js on the fake page, without the extension, in every layout profile of
// the real page (layouts/profiles.mjs REAL_LAYOUTS; each gets its own fake server): a shim
// stands in for `browser.runtime` (one `page` port whose messages the checks read and
// write), then the readers, typing.js and content.js are injected as the manifest would load them.
// Covers the port protocol of extension/README.md: hello, managed/unmanaged, facts on
// change, submit (every refusal code, steering, exactly-once, ambiguity; the app chosen
// first, its pill verified in the layout's shape), reconcile, and what issue 27 added: a
// person's upload in the composer, the October 2026 approval card and a control no real page
// shows are never typed beside, and the unrecognized part is reported settling, then settled.
import { ADAPTER_SCRIPTS, injectReaders, pollPage, sleep } from './harness.mjs';
import { startFakeChatGPT } from './server.mjs';
import { REAL_LAYOUTS, profileOf } from './layouts/profiles.mjs';
import { prefixed } from './page-checks.mjs';
import { allowAsThePerson } from './page-state-checks.mjs';
import { DEFAULT_APPS } from './server.mjs';

const BACKGROUND_SHIM = `(() => {
  const event = () => { const listeners = []; return { listeners, addListener: (listener) => listeners.push(listener) }; };
  const log = { sent: [], connects: 0, port: null };
  globalThis.__background = {
    log,
    deliver(message) { for (const listener of log.port.onMessage.listeners) listener(message); },
    drop() { const port = log.port; log.port = null; for (const listener of port.onDisconnect.listeners) listener(port); },
  };
  globalThis.browser = { runtime: { id: 'selftest', lastError: undefined, connect({ name }) {
    log.connects += 1;
    const port = { name, onMessage: event(), onDisconnect: event(), disconnect() {},
      postMessage(message) { log.sent.push(JSON.parse(JSON.stringify(message))); } };
    log.port = port;
    return port;
  } } };
})();`;

const SUBMIT_RESULT_WAIT_MS = 25_000;
const SERVER_PROMPT_WAIT_MS = 5_000;

async function openWithAdapter(page, url, answer = 'page.managed') {
  await page.goto(url);
  await page.addScriptTag({ content: BACKGROUND_SHIM });
  await injectReaders(page);
  for (const path of ADAPTER_SCRIPTS) await page.addScriptTag({ path });
  const hello = await pollPage(page, () => globalThis.__background.log.sent.find((message) => message.type === 'page.hello'), null, 3_000, 'page.hello');
  await deliver(page, answer === 'page.managed' ? { type: answer, workerId: 'worker-1' } : { type: answer });
  return hello;
}

const deliver = (page, message) => page.evaluate((value) => globalThis.__background.deliver(value), message);
const sent = (page) => page.evaluate(() => globalThis.__background.log.sent);
const factsMessages = async (page) => (await sent(page)).filter((message) => message.type === 'page.facts');
const composerContent = (page, profile) => page.evaluate((selector) => {
  const composer = document.querySelector(selector);
  return composer === null ? null : composer.tagName === 'TEXTAREA' ? composer.value : composer.textContent;
}, profile.composer);
const SENDING_CONTROLS = ['send', 'steer'];

let requestCounter = 0;

/** Waits until the fake server has a prompt containing `nonce` (it arrives after the page shows it). */
async function serverGot(server, nonce) {
  await server.waitFor(() => server.prompts.some((p) => p.text.includes(nonce)), SERVER_PROMPT_WAIT_MS, `the server to get ${nonce}`)
    .catch(() => {}); // the check that follows says what is missing
}

async function submit(page, { text, nonce, mode = 'idle', app = undefined }) {
  requestCounter += 1;
  const requestId = `req-${requestCounter}`;
  await deliver(page, { type: 'submit', requestId, text, nonce, mode, ...(app ? { app } : {}) });
  return pollPage(page, (id) => globalThis.__background.log.sent.find((message) => message.type === 'submit.result' && message.requestId === id),
    requestId, SUBMIT_RESULT_WAIT_MS, `submit.result ${requestId}`);
}

async function reconcile(page, nonce) {
  requestCounter += 1;
  const requestId = `req-${requestCounter}`;
  await deliver(page, { type: 'reconcile', requestId, nonce });
  const result = await pollPage(page, (id) => globalThis.__background.log.sent.find((message) => message.type === 'reconcile.result' && message.requestId === id),
    requestId, 2_000, `reconcile.result ${requestId}`);
  return result.found;
}

const prompt = (n, body = 'Go on.') => ({ text: `${body}\n[attempt exe-${n}]`, nonce: `[attempt exe-${n}]` });
const failedWith = (result, code, touched) => result.status === 'failed' && result.code === code && result.touched === touched;
const untilIdle = (page) => pollPage(page, () => {
  const facts = globalThis.OrcSelectors.computeFacts(document);
  return !facts.stopButton && facts.lastAssistantDone;
}, null, 10_000, 'the turn to end');

// A listener on window in the capture phase runs before the page's own listeners.
const blockPageEvents = (page, type, selector) => page.evaluate(([eventType, target]) => {
  globalThis.__block = (event) => { if (event.target.closest?.(target)) event.stopImmediatePropagation(); };
  addEventListener(eventType, globalThis.__block, true);
}, [type, selector]);
const unblockPageEvents = (page, type) => page.evaluate((eventType) => removeEventListener(eventType, globalThis.__block, true), type);

export async function runAdapterChecks({ browser, server, tally }) {
  // The layouts run side by side, each in its own page and server: the checks wait on page
  // events, not on wall time, so they do not disturb one another, and the run takes about
  // as long as one layout's.
  await Promise.all(REAL_LAYOUTS.map(async (layout) => {
    const own = server.layout === layout ? server : await startFakeChatGPT({ layout });
    try {
      await checkLayout({ browser, server: own, tally: prefixed(tally, layout), profile: profileOf(layout) });
    } finally {
      if (own !== server) await own.close();
    }
  }));
}

async function checkLayout({ browser, server, tally, profile }) {
  const { check, group } = tally;
  const page = await browser.newPage();
  let conversationId = null;

  await group('unmanaged tab', async () => {
    const hello = await openWithAdapter(page, server.url, 'page.unmanaged');
    check('hello: url and facts', hello.url === server.url && hello.facts.composer && hello.facts.url === server.url);
    await server.control(null, 'draft:someone types');
    await sleep(700);
    check('unmanaged: no facts reported after a change', (await factsMessages(page)).length === 0);
    const result = await submit(page, prompt(90));
    check('unmanaged: submit refused untouched', failedWith(result, 'CONVERSATION_CLOSED', false), JSON.stringify(result));
    check('unmanaged: the draft is left alone', (await composerContent(page, profile)) === 'someone types');
  });

  let managedAtMs = 0;
  await group('managed tab: facts on change', async () => {
    await openWithAdapter(page, server.url);
    managedAtMs = Date.now();
    await server.control(null, 'draft:hello');
    await pollPage(page, () => globalThis.__background.log.sent.some((message) => message.type === 'page.facts' && message.facts.composerText), null, 2_000, 'facts with a draft');
    await sleep(600);
    const reports = await factsMessages(page);
    check('managed: one facts message per real change', reports.length === 1 && reports[0].url === server.url, JSON.stringify(reports.map((report) => report.facts.composerText)));
    await server.control(null, 'clear-draft');
    await pollPage(page, () => globalThis.__background.log.sent.filter((message) => message.type === 'page.facts').length === 2, null, 2_000, 'facts without the draft');
    check('managed: the draft going away is reported', !(await factsMessages(page))[1].facts.composerText);
  });

  await group('submit in a new chat', async () => {
    server.setPlan(() => ({ generateMs: 3_000, reply: 'Working on it.' }));
    const first = prompt(1, 'Start the work.\nTwo lines.');
    const { name, description } = DEFAULT_APPS.apps[0];
    const result = await submit(page, { ...first, app: { name, description } });
    await serverGot(server, first.nonce);
    await server.waitFor(() => server.clicks.length > 0, SERVER_PROMPT_WAIT_MS, 'the click log').catch(() => {});
    check('submit idle: submitted after touching', result.status === 'submitted' && result.touched === true, JSON.stringify(result));
    check('submit idle: the server got the exact prompt', server.prompts.length === 1 && server.prompts[0].text === first.text, JSON.stringify(server.prompts));
    check(`submit idle: the app was chosen first, its pill (${profile.pillShape ?? 'plugin'}) verified`, server.prompts[0].app === name, JSON.stringify(server.prompts[0]));
    check('submit idle: one click, on Send', server.clicks.length === 1 && server.clicks[0].control === 'send', JSON.stringify(server.clicks));
    const moved = await pollPage(page, (prefix) => globalThis.__background.log.sent.find((message) => message.type === 'page.facts' && message.url.includes(prefix)),
      profile.conversationPrefix, 3_000, `facts at ${profile.conversationPrefix}<uuid>`);
    conversationId = new URL(moved.url).pathname.split('/')[2];
    check('submit idle: the new URL is reported', moved.facts.url === moved.url && moved.url === server.conversationUrl(conversationId) && conversationId.length === 36, moved.url);
  });

  await group('refusals while generating', async () => {
    const idle = await submit(page, prompt(2));
    check('idle submit while generating: NOT_IDLE, untouched', failedWith(idle, 'NOT_IDLE', false), JSON.stringify(idle));
    const steer = await submit(page, { ...prompt(3), mode: 'steer' });
    check('steer without a mid-turn send: STEERING_UNAVAILABLE', failedWith(steer, 'STEERING_UNAVAILABLE', false), JSON.stringify(steer));
    check('refusals: nothing sent', server.prompts.length === 1);
    await untilIdle(page);
  });

  await group('draft protection', async () => {
    await server.control(conversationId, 'draft:my own words');
    const result = await submit(page, prompt(4));
    check('draft: COMPOSER_BUSY, untouched', failedWith(result, 'COMPOSER_BUSY', false), JSON.stringify(result));
    check('draft: the person\'s text is intact', (await composerContent(page, profile)) === 'my own words');
    await server.control(conversationId, 'clear-draft');
    // A person's file still uploading (Send disabled): nothing is typed beside it.
    await server.control(conversationId, 'attach:uploading:report.pdf');
    const uploading = await submit(page, prompt(5));
    check('a file uploading: COMPOSER_BUSY, untouched', failedWith(uploading, 'COMPOSER_BUSY', false), JSON.stringify(uploading));
    check('a file uploading: nothing was typed', (await composerContent(page, profile)).trim() === '');
    await server.control(conversationId, 'clear-attachments');
  });

  await group('exactly once and reconcile', async () => {
    const again = await submit(page, prompt(1, 'Start the work.\nTwo lines.'));
    check('same nonce again: submitted without touching', again.status === 'submitted' && again.touched === false, JSON.stringify(again));
    check('same nonce again: nothing sent', server.prompts.length === 1);
    check('reconcile: the sent nonce is found', await reconcile(page, '[attempt exe-1]'));
    check('reconcile: another nonce is not', !(await reconcile(page, '[attempt exe-999]')));
  });

  await group('steering', async () => {
    server.setPlan(() => ({ generateMs: 4_000, reply: 'Long work.', steerable: true }));
    const started = await submit(page, prompt(6));
    check('steerable turn started', started.status === 'submitted', JSON.stringify(started));
    // The page offers a mid-turn Send only once it knows the turn is steerable.
    await pollPage(page, () => {
      const facts = globalThis.OrcSelectors.computeFacts(document);
      return facts.stopButton && facts.sendButton;
    }, null, 3_000, 'Stop and Send together');
    const steer = await submit(page, { ...prompt(7, 'Checkpoint: report progress.'), mode: 'steer' });
    check('steer: submitted mid-turn', steer.status === 'submitted' && steer.touched, JSON.stringify(steer));
    // The page shows the prompt before its request reaches the server: wait for the server.
    await serverGot(server, '[attempt exe-7]');
    check('steer: recorded as steering', server.prompts.at(-1).steer === true && server.prompts.at(-1).text.endsWith('[attempt exe-7]'));
    await untilIdle(page);
  });

  await group('delivery timeout', async () => {
    server.setPlan(() => ({ generateMs: 200, error: 'delivery_timeout' }));
    check('timed-out turn submitted', (await submit(page, prompt(8))).status === 'submitted');
    const reported = await pollPage(page, () => globalThis.__background.log.sent.find((message) => message.type === 'page.facts' && message.facts.error?.kind === 'delivery_timeout'),
      null, 3_000, 'facts with the delivery timeout');
    check('delivery timeout: reported', reported.facts.error.text.startsWith('Message delivery timed out'));
    server.setPlan(() => ({ generateMs: 200, reply: 'Resumed.' }));
    const resumed = await submit(page, prompt(9, 'continue'));
    check('delivery timeout: a fresh continue is submitted', resumed.status === 'submitted', JSON.stringify(resumed));
    check('delivery timeout: Retry recognised', reported.facts.error.retry === true, JSON.stringify(reported.facts.error));
    check('delivery timeout: Retry never clicked', !server.clicks.some((click) => click.control === 'retry'));
    await untilIdle(page);
  });

  await group('the October 2026 approval card', async () => {
    server.setPlan(async ({ approve }) => {
      await approve('worker_progress', { variant: 'container', stop: false, warning: true });
      return { generateMs: 100, reply: 'Reported.' };
    });
    check('a turn that asks for approval starts', (await submit(page, prompt(20))).status === 'submitted');
    await server.waitFor(() => server.approvalIn(conversationId) !== null, 5_000, 'the card');
    const reported = await pollPage(page, () => globalThis.__background.log.sent.find((message) => message.type === 'page.facts' && message.facts.approval !== null),
      null, 3_000, 'facts with the card');
    check('the card is reported, its warning too', reported.facts.approval.app === 'Orchestrator' && /Suspicious/.test(reported.facts.approval.warning), JSON.stringify(reported.facts.approval));
    const beside = await submit(page, prompt(21));
    check('beside the card: NOT_IDLE, untouched', failedWith(beside, 'NOT_IDLE', false), JSON.stringify(beside));
    check('nothing clicked the card', server.approvalClicks.length === 0, JSON.stringify(server.approvalClicks));
    // The person answers (a trusted click by the test's driver; one landing while the page
    // redraws the card is lost, and the person clicks again).
    await allowAsThePerson(page, server, conversationId);
    await untilIdle(page);
    check('the person\'s click answered it', server.approvalClicks.length >= 1 && server.approvalClicks.every((click) => click.trusted), JSON.stringify(server.approvalClicks));
  });

  // Facts reports naming something unrecognized: none but those of the injected control.
  const unrecognizedReports = async () => (await factsMessages(page)).filter((message) => message.facts.unrecognized !== null).length;
  let injectedReports = 0;
  await group('a control no real page shows', async () => {
    check('before it: no report named anything unrecognized', (await unrecognizedReports()) === 0);
    await server.control(conversationId, 'inject:turn:<div class="promo-card"><p>New</p><button type="button">Try it</button></div>');
    const settled = await pollPage(page, () => globalThis.__background.log.sent.find((message) => message.type === 'page.facts'
      && message.facts.unrecognized !== null && !message.facts.unrecognized.settling), null, 4_000, 'the unrecognized part, settled');
    const sentFacts = (await factsMessages(page)).map((message) => message.facts.unrecognized);
    const firstSeen = sentFacts.findIndex((unrecognized) => unrecognized !== null);
    check('unrecognized: reported settling first, then settled', firstSeen !== -1 && sentFacts[firstSeen].settling === true, JSON.stringify(sentFacts.slice(firstSeen)));
    check('unrecognized: what and where', settled.facts.unrecognized.where === 'latest turn' && settled.facts.unrecognized.what.startsWith('div.promo-card'), JSON.stringify(settled.facts.unrecognized));
    const refused = await submit(page, prompt(22, 'continue'));
    check('unrecognized: NOT_IDLE, untouched', failedWith(refused, 'NOT_IDLE', false) && /page not recognized/.test(refused.detail), JSON.stringify(refused));
    await server.control(conversationId, 'uninject');
    await pollPage(page, () => globalThis.__background.log.sent.at(-1)?.facts?.unrecognized === null, null, 2_000, 'facts without it');
    check('recognized again: reported', true);
    injectedReports = await unrecognizedReports();
  });

  await group('send never enables', async () => {
    await blockPageEvents(page, 'input', profile.composer);
    const result = await submit(page, prompt(12));
    await unblockPageEvents(page, 'input');
    // Nothing was clicked and the prompt is gone again: the failure is definite.
    check('send disabled: HOST_UI_CHANGED, untouched once the prompt is cleared', failedWith(result, 'HOST_UI_CHANGED', false), JSON.stringify(result));
    check('send disabled: the typed prompt is cleared again', (await composerContent(page, profile)).trim() === '');
  });

  await group('no evidence after the click', async () => {
    const promptsBefore = server.prompts.length;
    await blockPageEvents(page, 'click', profile.send);
    const result = await submit(page, prompt(13));
    await unblockPageEvents(page, 'click');
    check('no new user turn: AMBIGUOUS_SUBMISSION', failedWith(result, 'AMBIGUOUS_SUBMISSION', true), JSON.stringify(result));
    const next = prompt(14);
    const replaced = await submit(page, next);
    if (replaced.status === 'submitted') await serverGot(server, next.nonce);
    check('own leftover text is replaced, not kept', replaced.status === 'submitted' && server.prompts.length === promptsBefore + 1
      && server.prompts.at(-1).text === next.text, JSON.stringify({ replaced, last: server.prompts.at(-1) }));
    await untilIdle(page);
  });

  await group('stale stop, full, broken UI, bad command', async () => {
    const invalid = await submit(page, { text: 'no nonce here', nonce: '[attempt exe-15]' });
    check('a text without its nonce: INVALID_COMMAND', failedWith(invalid, 'INVALID_COMMAND', false), JSON.stringify(invalid));
    await server.control(conversationId, 'full');
    const full = await submit(page, prompt(16));
    check('full: CONVERSATION_FULL, untouched', failedWith(full, 'CONVERSATION_FULL', false), JSON.stringify(full));
    await server.control(conversationId, 'stale-stop');
    const stale = await submit(page, prompt(17));
    check('stale stop: NOT_IDLE, untouched', failedWith(stale, 'NOT_IDLE', false), JSON.stringify(stale));
    await server.control(conversationId, 'break-ui');
    const broken = await submit(page, prompt(18));
    check('broken UI: HOST_UI_CHANGED, untouched', failedWith(broken, 'HOST_UI_CHANGED', false), JSON.stringify(broken));
    await pollPage(page, () => globalThis.__background.log.sent.some((message) => message.type === 'page.facts' && !message.facts.composer), null, 2_000, 'facts without a composer');
    check('broken UI: reported as facts', true);
  });

  const reports = (await factsMessages(page)).length;
  check(`of ${reports} facts reports on this page, only the injected control's named something unrecognized`, (await unrecognizedReports()) === injectedReports,
    `${await unrecognizedReports()} vs ${injectedReports}`);

  await group('keepalive', async () => {
    const pings = (await sent(page)).filter((message) => message.type === 'page.ping').length;
    const expected = Math.floor((Date.now() - managedAtMs) / 20_000);
    check(`page.ping every 20 s while managed (${pings} in ${Math.round((Date.now() - managedAtMs) / 1000)} s)`, expected >= 1 && Math.abs(pings - expected) <= 1);
  });

  await group('reconnect', async () => {
    await openWithAdapter(page, server.conversationUrl(conversationId));
    await page.evaluate(() => globalThis.__background.drop());
    const hellos = await pollPage(page, () => {
      const { log } = globalThis.__background;
      return log.connects === 2 && log.sent.filter((message) => message.type === 'page.hello').length === 2;
    }, null, 3_000, 'a second hello');
    check('reconnect: a new port says hello again', hellos);
    await deliver(page, { type: 'page.managed', workerId: 'worker-1' });
    await server.control(conversationId, 'draft:after the reconnect');
    await pollPage(page, () => globalThis.__background.log.sent.some((message) => message.type === 'page.facts' && message.facts.composerText), null, 2_000, 'facts on the new port');
    check('reconnect: facts flow on the new port', true);
  });

  // The adapter's clicks are a script's (untrusted); the test's own, as the person, are trusted.
  const adapterClicks = server.clicks.filter((click) => !click.trusted);
  check('the adapter clicked only Send, once per accepted prompt',
    adapterClicks.every((click) => SENDING_CONTROLS.includes(click.control)) && adapterClicks.length === server.prompts.length, JSON.stringify(server.clicks));
  await page.close();
}
