// Test support for the browser tests that start a run the way a person does: from the
// toolbar popup's "Start a run here" on a ChatGPT tab (src/ui/start-view.js). Not a test file.
import assert from 'node:assert/strict';
import { until, evaluate, reloadPage, press, typeInto, screenshot } from './ui-pages.mjs';

/** The tab id of the page showing `url` (asked from an extension page). */
export async function tabIdOf(extensionPage, url) {
  return until(`a tab showing ${url}`, () => evaluate(extensionPage, async (u) => {
    const tabs = await (globalThis.browser ?? globalThis.chrome).tabs.query({});
    return tabs.find((t) => t.url === u)?.id ?? null;
  }, url));
}

/** Makes `tabId` the active tab (a person clicks the toolbar button on it) and reloads the popup. */
export async function popupOn(popup, tabId) {
  await evaluate(popup, (id) => (globalThis.browser ?? globalThis.chrome).tabs.update(id, { active: true }).then(() => true), tabId);
  await reloadPage(popup);
  await until('the popup to offer Start a run here', () => evaluate(popup, () => document.querySelector('[data-testid="start-run-open"]:not([disabled])') !== null));
}

/** Fills and sends the popup's start form; `shot` names a screenshot of the filled form. */
export async function startFromPopup(w, popup, { taskName, rootName, plan, shot, deadMan = null }) {
  await press(popup, '[data-testid="start-run-open"]');
  await typeInto(popup, '#start-task', taskName);
  await typeInto(popup, '#start-root', rootName);
  await typeInto(popup, '#start-plan', plan);
  if (deadMan) {
    await evaluate(popup, (value) => {
      const select = document.querySelector('[data-testid="start-dead-man"]');
      select.value = value;
      select.dispatchEvent(new Event('change'));
    }, deadMan);
  }
  const auto = await evaluate(popup, () => document.querySelector('[data-testid="start-auto-resume"]').checked);
  assert.equal(auto, true, 'Auto Resume is on by default');
  if (shot) await screenshot(w, popup, shot, { fullPage: true });
  await press(popup, '[data-testid="start-submit"]');
}

/** The one unfinished run named `taskName`, once the daemon has it. */
export async function runNamed(w, taskName) {
  return until(`the run "${taskName}"`, async () => (await w.mcp.call('run_list', {})).runs.find((r) => r.taskName === taskName));
}
