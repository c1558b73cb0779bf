// End to end, in headless Chromium and Firefox ESR: pairing from the real extension's
// settings page against the real daemon. The extension starts without a token ("Token
// missing"); the settings page finds the daemon on loopback by itself ("Daemon found at
// localhost:PORT — enter the pairing code", through the daemon's CORS answer), a code from the daemon (`POST /pair/code`, as
// `orchestrator pair` asks for it) is typed and Pair pressed; the token is saved and the
// connection turns Live (the negative cases: adapters/orchestrator/tests/pairing.rs and
// test/unit/pairing.test.mjs). Screenshot:
// docs/screenshots/pairing.png (the code typed, before Pair).
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { BROWSERS } from './lib/browsers.mjs';
import { inWorld } from './lib/world.mjs';
import { EXECUTOR_TOKEN } from './lib/daemon.mjs';
import { until, evaluate, openExtensionPage, press, typeInto, screenshot, setViewport } from './lib/ui-pages.mjs';

const pairStatus = (page) => evaluate(page, () => document.querySelector('[data-testid="pair-status"]')?.textContent ?? '');
const connection = (page) => evaluate(page, () => document.querySelector('[data-testid="connection"]')?.dataset.status ?? '');

for (const kind of BROWSERS) {
  describe(`pairing (${kind})`, () => {
    test('the settings page finds the daemon, a code pairs once, the extension goes Live', { timeout: 120_000 }, async () => {
      await inWorld(kind, async (w) => {
        const settings = await openExtensionPage(w, 'src/ui/settings.html');
        await setViewport(w, settings, { width: 760, height: 560 });
        await until('token missing', async () => (await connection(settings)) === 'token_missing');
        // The daemon named as localhost: the test build's host permission covers 127.0.0.1
        // (the fake page's host) and would lift CORS; for localhost the page needs the
        // daemon's CORS answer, as the production build (no such permission) always does.
        const host = `localhost:${w.daemon.port}`;
        await evaluate(settings, (url) => { document.querySelector('[data-testid="setting-daemon-url"]').value = url; }, `ws://${host}/executor`);
        await press(settings, '[data-testid="settings-save"]', { what: 'Save' });
        await until('saved', async () => (await evaluate(settings, () => document.querySelector('[data-testid="settings-status"]').textContent)).startsWith('Saved.'));
        // No reload: saving a new address looks for the daemon there at once.
        await until('the daemon found', async () => (await pairStatus(settings)) === `Daemon found at ${host} — enter the pairing code.`);

        const code = await w.daemon.pairCode();
        await typeInto(settings, '[data-testid="pair-code"]', code);
        await screenshot(w, settings, 'pairing', { clip: { x: 0, y: 0, width: 760, height: 330 } });
        await press(settings, '[data-testid="pair-submit"]', { what: 'Pair' });
        await until('paired', async () => (await pairStatus(settings)).startsWith(`Paired with ${host}.`));
        await until('live', async () => (await connection(settings)) === 'live');
        const token = await evaluate(settings, () => document.querySelector('[data-testid="setting-token"]').value);
        assert.equal(token, EXECUTOR_TOKEN, 'the token field shows the saved token');
      }, { settings: { token: '' } });
    });
  });
}
