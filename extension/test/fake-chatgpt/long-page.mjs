// A long conversation for the benchmark and the cost checks: the `idle` fixture of each
// real-page layout (extension/test/fixtures/pages/) served at its address, and, in the page,
// its transcript grown to N turns by repeating its answered turn pairs. `growPage` runs in
// the page (page.evaluate): it leaves the latest assistant turn's text block, where the
// simulated tokens go, in globalThis.OrcLongPageTarget.
import { createServer } from 'node:http';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const FIXTURES_DIR = fileURLToPath(new URL('../fixtures/pages/', import.meta.url));

/** [layout, idle fixture, the address the real page had]. */
export const LONG_PAGE_LAYOUTS = [
  ['article-2026-01', 'article-2026-01/idle.html', '/c/00000000-0000-4000-8000-000000000001'],
  ['section-2026-08', 'section-2026-08/idle.html', '/c/00000000-0000-4000-8000-000000000001'],
  ['transcript-2026-10', 'transcript-2026-10/idle.html', '/uc/00000000-0000-4000-8000-000000000001'],
  ['turn-key-2026-09', 'turn-key-2026-09/idle.html', '/c/00000000-0000-4000-8000-000000000001'],
];

/** Serves each layout's idle page at /<layout><address>: `{url(layout), close()}`. */
export async function serveLongPages() {
  const server = createServer((request, response) => {
    const entry = LONG_PAGE_LAYOUTS.find(([name]) => request.url.startsWith(`/${name}/`));
    if (!entry) return response.writeHead(404).end();
    return response.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(readFileSync(`${FIXTURES_DIR}${entry[1]}`, 'utf8'));
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  const base = `http://127.0.0.1:${server.address().port}`;
  return {
    url: (layout) => `${base}/${layout}${LONG_PAGE_LAYOUTS.find(([name]) => name === layout)[2]}`,
    close: () => new Promise((resolve) => server.close(resolve)),
  };
}

/**
 * In the page: grows the transcript to `turns` turns by cloning its rows. `streaming`: the
 * latest answer is still being written (its action bar removed with every button of it, as
 * while a turn generates);
 * otherwise tokens land in a finished answer (whose tail the facts then re-read).
 */
export function growPage({ turns, streaming }) {
  const all = [...document.querySelectorAll('[data-testid^="conversation-turn-"], li[data-message-role], [data-turn-key]')];
  let container = all[0].parentElement;
  while (!container.contains(all.at(-1))) container = container.parentElement;
  // An app-shell row is an exchange: a question and its answer.
  const rowsWanted = all[0].matches('[data-turn-key]') ? Math.ceil(turns / 2) : turns;
  const rows = [...container.children];
  for (let i = 0; container.children.length < rowsWanted; i += 1) container.append(rows[i % rows.length].cloneNode(true));
  while (container.children.length > rowsWanted) container.lastElementChild.remove();
  const latest = container.lastElementChild;
  if (streaming) {
    // The whole bar goes (a generating answer shows none): a bar group as it is, and around
    // a test id's button its group, unless that holds prose.
    for (const bar of latest.querySelectorAll('[data-message-actions], .turn-action-controls')) bar.remove();
    for (const mark of latest.querySelectorAll('[data-testid$="-turn-action-button"]')) {
      const group = mark.parentElement;
      (group !== latest && group.querySelector('.markdown, [data-assistant-markdown], [data-markdown-text-style]') === null ? group : mark).remove();
    }
    latest.removeAttribute('data-message-complete');
  }
  globalThis.OrcLongPageTarget = latest.querySelector('.markdown, [data-assistant-markdown], [data-markdown-text-style], p') ?? latest;
  globalThis.OrcLongPageList = container;
}
