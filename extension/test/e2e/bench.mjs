// Benchmark (not a test): in headless Chromium and Firefox ESR with the real daemon, the
// real extension and the fake ChatGPT page, how long after a conversation visibly goes idle
// (the page drew the turn's action bar) the daemon's automatic resume arrives back as a
// submitted prompt, minus the idle grace, and how late the page drew that idle against the
// server's plan; and, in Chromium, how much script time a managed tab costs while it sits idle.
// The fake page shows one layout profile (test/fake-chatgpt/layouts/; section-2026-08, the
// newest signed-in layout, unless --layout names another; figures measured before these
// profiles existed used the page's first, `legacy`, markup).
//
//   node test/e2e/bench.mjs [--turns N] [--idle-seconds S] [--browsers chromium,firefox] [--layout NAME]
//
// Figures go to docs/benchmarks.md by hand, with this command line.
import { parseArgs } from 'node:util';
import { World, IDLE_GRACE_MS, block, pause } from './lib/world.mjs';

/** The fake page shows a finished turn's action bar this long after its generation ends. */
const ACTION_BAR_DELAY_MS = 250;
const GENERATE_MS = 200;

const { values } = parseArgs({
  options: {
    turns: { type: 'string', default: '60' },
    'idle-seconds': { type: 'string', default: '60' },
    browsers: { type: 'string', default: 'chromium,firefox' },
    layout: { type: 'string', default: 'section-2026-08' },
  },
});
const turns = Number(values.turns);
const idleSeconds = Number(values['idle-seconds']);

for (const kind of values.browsers.split(',')) {
  const world = await World.open(kind, { layout: values.layout });
  console.log(`${kind}: fake page layout ${world.layout}`);
  try {
    console.log(`${kind}: ${await resumeLatency(world, turns)}`);
    if (kind === 'chromium') console.log(`${kind}: ${await idleCost(world, idleSeconds)}`);
  } finally {
    await world.close();
  }
}

/**
 * Resumes `count` times; each latency is the prompt's arrival minus the moment the page drew
 * the previous turn's action bar minus the grace. A turn the page never reported drawing is
 * counted as missing.
 */
async function resumeLatency(world, count) {
  await world.createRun('Latency bench');
  const lane = await world.spawnLane('/root/bench', async ({ turn, workerId }) => {
    // Durable progress every turn, so the stall guard never pauses the bench.
    await world.mcp.call('worker_progress', { workerId, summary: `turn ${turn}` });
    if (turn > count) await world.mcp.call('worker_complete', { workerId, summary: 'bench done' });
    return { generateMs: GENERATE_MS, reply: block(turn > count ? 'complete' : 'working', `turn ${turn}`) };
  });
  // The managed tab stays in the background, as a real one does overnight. Browsers stretch
  // its timers, the fake page's turn ends among them (a real page's follow the network):
  // hence latencies count from the moment the page drew the idle turn.
  await world.waitForPrompts(lane, 1);
  const skew = await clockSkew(await managedPage(world));
  await world.waitForPrompts(lane, count + 1, 10 * 60_000);
  const prompts = world.prompts(lane);
  const convo = world.fake.conversations().find((c) => c.id === prompts[0].conversationId);
  const ended = convo.turns.filter((t) => t.role === 'assistant' && t.endsAtMs !== null && !t.seeded);
  const latencies = [];
  const lags = [];
  let missing = 0;
  for (let k = 1; k < prompts.length && k - 1 < ended.length; k += 1) {
    const { endsAtMs, drawnDoneAtMs } = ended[k - 1];
    if (drawnDoneAtMs === null) {
      missing += 1;
    } else {
      latencies.push(prompts[k].atMs - drawnDoneAtMs - IDLE_GRACE_MS);
      lags.push(drawnDoneAtMs - (endsAtMs + ACTION_BAR_DELAY_MS));
    }
  }
  return `idle drawn -> resume submitted, minus ${IDLE_GRACE_MS} ms grace, ${latencies.length} resumes `
    + `(${missing} without a drawn time): ${stats(latencies)}\n`
    + `  idle drawn after the planned idle (server end + ${ACTION_BAR_DELAY_MS} ms): ${stats(lags)}\n`
    + `  page clock - bench clock: ${skew}`;
}

/** The managed tab (its URL becomes the layout's /c/<uuid> or /uc/<id> once the page has the server's answer). */
async function managedPage(world) {
  const deadline = Date.now() + 10_000;
  const prefix = world.profile.conversationPrefix;
  for (;;) {
    const page = (await world.browser.pages()).find((p) => new URL(p.url()).pathname.startsWith(prefix));
    if (page) return page;
    if (Date.now() > deadline) throw new Error(`no managed tab at ${prefix}<id> within 10 s`);
    await pause(100);
  }
}

/** Bounds of the page's Date.now() minus this process's, from the quickest of five round trips. */
async function clockSkew(page) {
  let best = null;
  for (let i = 0; i < 5; i += 1) {
    const before = Date.now();
    const pageNow = await page.evaluate(() => Date.now());
    const after = Date.now();
    if (best === null || after - before < best.after - best.before) best = { before, pageNow, after };
  }
  return `${best.pageNow - best.after} to ${best.pageNow - best.before} ms`;
}

/** Script time of an idle managed tab against an unmanaged one (Chromium CDP metrics). */
async function idleCost(world, seconds) {
  const managed = await managedPage(world);
  const unmanaged = world.hookPage;
  const sessions = await Promise.all([managed, unmanaged].map(async (page) => {
    const cdp = await world.browser.context.newCDPSession(page);
    await cdp.send('Performance.enable');
    return cdp;
  }));
  const before = await Promise.all(sessions.map(metrics));
  await pause(seconds * 1000);
  const after = await Promise.all(sessions.map(metrics));
  const perMinute = (i, name) => ((after[i][name] - before[i][name]) * 1000 * 60) / seconds;
  return `idle ${seconds} s: script time per minute: managed tab ${perMinute(0, 'ScriptDuration').toFixed(1)} ms, `
    + `unmanaged tab ${perMinute(1, 'ScriptDuration').toFixed(1)} ms; tasks per minute: managed ${perMinute(0, 'TaskDuration').toFixed(1)} ms`;
}

async function metrics(cdp) {
  const { metrics: list } = await cdp.send('Performance.getMetrics');
  return Object.fromEntries(list.map((m) => [m.name, m.value]));
}

function stats(values) {
  if (values.length === 0) return 'no samples';
  const sorted = [...values].sort((a, b) => a - b);
  const at = (q) => sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)];
  return `p50 ${at(0.5)} ms, p95 ${at(0.95)} ms, p99 ${at(0.99)} ms, max ${sorted.at(-1)} ms, min ${sorted[0]} ms`;
}
