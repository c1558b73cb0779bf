// The fake ChatGPT page's developer apps (chatgpt-apps notes 1.2 and 2.2; the fixtures
// test/fixtures/pages/section-2026-08/{mention-popover,composer-pill,approval-*}.html show the
// markup): the `@` mention popover (recent prompts that mention an app, then app rows with a
// name and a description line; `.__menu-item[tabindex="0"]` rows, `data-highlighted` on the
// keyboard's row; ArrowDown/ArrowUp move it, Enter picks it, Escape closes), the chosen app's
// pill in the composer (inside the editor, or beside a textarea: the 2026 ProseMirror node, or,
// where the layout says so, the October 2026 `app-mention-path` mention), and the
// tool-approval card of a scripted tool call, in each shape seen since 2025: the test id's card,
// the dialog, the split button, and the October 2026 container card (`@container/approval-card`,
// its title in an inner `role=alert`, a form of "Always allow", "Deny" and "Allow once" with
// their key hints, no test id, no dialog role; optionally the red "Suspicious Instruction"
// warning; live traces of 2026-10-06 quoted in thaiGO2003/omp-codex-web-stability
// tests/browser-approval-card.upstream.ts). Every click on the card is reported with
// `event.isTrusted`, so a test can prove that no script (a content script's `.click()` is
// untrusted) ever clicked it.
// Classic script loaded before page.js, which calls `FakeChatGPTApps.create(...)`.
'use strict';

globalThis.FakeChatGPTApps = Object.freeze({
  /**
   * `composer`, `form`: the layout's; `ui`: page.js's helpers; `postJson(path, body)`;
   * `conversationId()`: the page's conversation; `changed()`: re-render after a pick.
   */
  create({ composer, form, ui, postJson, conversationId, changed, pillShape = 'plugin' }) {
    const { element } = ui;
    const PILL = '[data-inline-selection-pill], [app-mention-path]';
    let catalog = { apps: [], recent: [] };
    let popover = null; // {root, rows: [{element, pick}], highlighted}
    let cardElement = null;
    let cardKey = null;

    // The catalog is asked for at every mention, so a test's setApps applies to open pages too.
    const fetchCatalog = () => fetch('/__fake/apps').then((response) => response.json()).then((body) => { catalog = body; });

    function pillElement() {
      return (composer.tagName === 'TEXTAREA' ? form : composer).querySelector(PILL);
    }

    // The composer's text before a mention: a trailing `@query`.
    function mentionQuery(text) {
      return /(?:^|\s)@([^\s@]*)$/.exec(text)?.[1] ?? null;
    }

    function closePopover() {
      popover?.root.remove();
      popover = null;
    }

    function highlight(index) {
      popover.highlighted = (index + popover.rows.length) % popover.rows.length;
      popover.rows.forEach((row, at) => ui.setAttribute(row.element, 'data-highlighted', at === popover.highlighted ? '' : null));
    }

    function row(children, pick) {
      return { element: element('div', { class: '__menu-item', tabindex: '0', role: 'option' }, ...children), pick };
    }

    function openPopover(query, plainText) {
      const wanted = query.toLowerCase();
      const recent = catalog.recent.filter((prompt) => prompt.toLowerCase().includes(`@${wanted}`))
        .map((prompt) => row([element('div', { class: 'truncate' }, prompt)], () => replaceMention(plainText, query, prompt)));
      const apps = catalog.apps.filter((app) => app.name.toLowerCase().startsWith(wanted))
        .map((app) => row([element('img', { alt: '', width: '20', height: '20', src: 'data:,' }),
          element('div', { class: 'flex flex-col' }, element('div', { class: 'truncate' }, app.name),
            element('div', { class: 'text-token-text-tertiary truncate text-xs' }, app.description))], () => choose(plainText, query, app)));
      closePopover();
      if (recent.length + apps.length === 0) return;
      const list = element('div', { role: 'listbox', class: 'popover', 'data-state': 'open', 'aria-label': 'Mentions' },
        ...(recent.length ? [element('div', { class: '__menu-label' }, 'Recent'), ...recent.map((r) => r.element)] : []),
        ...(apps.length ? [element('div', { class: '__menu-label' }, 'Apps'), ...apps.map((r) => r.element)] : []));
      popover = { root: element('div', { 'data-radix-popper-content-wrapper': '' }, list), rows: [...recent, ...apps], highlighted: 0 };
      document.body.append(popover.root);
      highlight(0);
    }

    function replaceMention(plainText, query, replacement) {
      const text = `${plainText.slice(0, plainText.length - query.length - 1)}${replacement}`;
      if (composer.tagName === 'TEXTAREA') composer.value = text;
      else composer.replaceChildren(element('p', {}, text));
      composer.dispatchEvent(new InputEvent('input', { inputType: 'insertReplacementText', bubbles: true }));
    }

    // The chosen app's pill: the 2026 ProseMirror node, or the October 2026 mention (its app
    // path, its display name, not editable; thaiGO2003/omp-codex-web-stability, 2026-10-06).
    function pillOf(app) {
      if (pillShape === 'app-mention') {
        return element('span', {
          class: 'inline-flex items-center', contenteditable: 'false', 'app-mention-path': `app://${app.id.replace(/^plugin:/, '')}`,
          'app-mention-display-name': app.name, dir: 'auto',
        }, element('span', { class: 'block' }, app.name));
      }
      return element('span', {
        class: 'inline-flex items-center gap-1', contenteditable: 'false', 'data-id': app.id, 'data-inline-selection-pill': '',
        'data-keyword': app.name, 'data-symbol': 'ecosystemMention', 'data-system-hint-type': app.id, dir: 'auto',
      }, app.name);
    }

    // The mention text becomes the pill; the editor's subtree is replaced (as on the real page).
    function choose(plainText, query, app) {
      const rest = plainText.slice(0, plainText.length - query.length - 1);
      const pill = pillOf(app);
      pillElement()?.remove();
      if (composer.tagName === 'TEXTAREA') {
        composer.value = rest;
        form.insertBefore(pill, composer);
      } else {
        composer.replaceChildren(element('p', {}, ...(rest ? [rest] : []), pill, ' '));
        const range = document.createRange();
        range.selectNodeContents(composer);
        range.collapse(false);
        getSelection().removeAllRanges();
        getSelection().addRange(range);
      }
      composer.dispatchEvent(new InputEvent('input', { inputType: 'insertReplacementText', bubbles: true }));
    }

    composer.addEventListener('keydown', (event) => {
      if (popover === null) return;
      const keys = { ArrowDown: () => highlight(popover.highlighted + 1), ArrowUp: () => highlight(popover.highlighted - 1), Escape: closePopover };
      if (event.key === 'Enter') {
        const chosen = popover.rows[popover.highlighted];
        closePopover();
        chosen.pick();
        changed();
      } else if (keys[event.key]) {
        keys[event.key]();
      } else {
        return;
      }
      event.preventDefault();
      event.stopImmediatePropagation();
    }, true);

    document.addEventListener('click', (event) => {
      const card = event.target.closest?.('[data-fake-approval]');
      if (!card) return;
      const choice = event.target.closest('[data-fake-choice]')?.getAttribute('data-fake-choice') ?? null;
      void postJson('/__fake/approval-click', {
        conversationId: conversationId(), choice, trusted: event.isTrusted, label: event.target.closest('button')?.textContent.trim() ?? '',
      });
    }, true);

    function cardButtons(variant) {
      const button = (label, choice, attributes = {}) => element('button', { type: 'button', class: 'btn', 'data-fake-choice': choice, ...attributes }, label);
      const hinted = (label, hint, choice) => element('button', { type: 'button', class: 'btn', 'data-fake-choice': choice }, label, element('span', { class: 'kbd' }, hint));
      switch (variant) {
        case 'container': return [button('Always allow', 'allow'), hinted('Deny', ' Esc', 'deny'), hinted('Allow once', ' ⏎', 'allow')];
        case 'always': return [button('Always allow', 'allow'), button('Deny', 'deny'), button('Allow once', 'allow'), button('See details', null)];
        case 'split': return [button('Deny', 'deny'), element('div', { class: 'flex' }, button('Allow', 'allow'),
          button('', null, { 'aria-haspopup': 'menu', 'aria-expanded': 'false', 'data-state': 'closed' }))];
        case 'dialog': return [button('Deny', 'deny'), button('Allow', 'allow')];
        default: return [button('Deny', 'deny'), button('Allow once', 'allow')];
      }
    }

    // The October 2026 card: no test id, no dialog role; the title in an inner alert, the
    // buttons in a form, the safety warning (when ChatGPT raises it) in an alert of its own.
    function containerCard(approval, title) {
      return element('div', { class: '@container/approval-card my-2 rounded-3xl border p-4', 'data-fake-approval': '' },
        element('div', { role: 'alert', class: 'flex flex-col' }, element('p', { class: 'font-medium' }, title),
          element('p', { class: 'text-token-text-secondary text-sm' }, `Call ${approval.tool}`)),
        ...(approval.warning ? [element('aside', { role: 'alert', class: 'text-token-text-error text-sm' }, 'Suspicious Instruction: review this tool request.')] : []),
        element('form', { class: 'flex justify-end gap-2' }, ...cardButtons('container')));
    }

    function buildCard(approval) {
      const title = `Allow ChatGPT to use ${approval.app}?`;
      if (approval.variant === 'container') return containerCard(approval, title);
      const body = [element('div', { class: 'text-token-text-secondary text-sm' }, 'Data shared includes: workerId, summary'),
        element('div', { class: 'text-sm' }, `Call ${approval.tool}`), element('div', { class: 'flex justify-end gap-2' }, ...cardButtons(approval.variant))];
      if (approval.variant === 'dialog') {
        return element('div', { role: 'dialog', 'aria-modal': 'true', 'data-state': 'open', 'aria-labelledby': 'fake-approval-title', 'data-fake-approval': '' },
          element('h2', { id: 'fake-approval-title' }, title), ...body);
      }
      return element('div', { 'data-testid': 'tool-approval-card', class: 'my-2 rounded-3xl border p-4', 'data-fake-approval': '' },
        element('div', { class: 'flex items-center gap-2' }, element('div', { class: 'font-semibold' }, title)), ...body);
    }

    return {
      /** Opens, filters or closes the popover after the composer's text changed (`read()`: its text now). */
      onInput(read) {
        const query = mentionQuery(read());
        if (query === null) closePopover();
        else void fetchCatalog().then(() => mentionQuery(read()) === query && openPopover(query, read()));
      },
      /** The chosen app's name, or null. */
      chosen: () => pillElement()?.getAttribute('data-keyword') ?? pillElement()?.getAttribute('app-mention-display-name') ?? null,
      clearPill: () => pillElement()?.remove(),
      isPill: (node) => node.nodeType === Node.ELEMENT_NODE && node.matches(PILL),
      /** Draws `approval` ({app, tool, variant, warning}) in the latest assistant row (`host`), or removes it. */
      renderCard(approval, host) {
        const key = approval === null ? null : JSON.stringify(approval);
        if (key !== cardKey) {
          cardElement?.remove();
          cardElement = approval === null ? null : buildCard(approval);
          cardKey = key;
        }
        if (cardElement === null) return;
        const parent = approval.variant === 'dialog' ? document.body : host;
        if (parent && cardElement.parentElement !== parent) parent.append(cardElement);
      },
    };
  },
});
