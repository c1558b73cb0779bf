// The managed-tab overlay (spec 000 §17.3), the last classic content script. It renders
// the view model the background sends as `{type: 'overlay.update', view}` (built by
// view.js's overlayView; null hides it) in an extension-owned Shadow DOM host fixed at
// the top right, clear of ChatGPT's composer, send and stop controls: a collapsed pill
// and a drawer with the worker's state, who carries it, a question's offered answers, its
// buttons (each a `ui.action`) and recent events; on a finished worker's tab, how it ended
// and a link to its run in the dashboard's Finished (opened by the background, `ui.open`). Unmanaged tabs never get a view, so nothing is drawn there. Hidden globally
// with storage.local `ui.overlayHidden`. Its diagnostics name the layout profile the page
// readers matched (selectors.js) and, when the page failed closed (the adapter cannot read
// it, or holds something it cannot name: the view says so, or the overlay's own reading finds
// what is missing or not recognized), offer "Copy page shape" (page-shape.js: a skeleton
// without text or ids, for a bug report, naming the part not recognized). Classic script,
// loaded after selectors.js and page-shape.js: no imports, one IIFE scope.
(() => {
  const api = globalThis.browser ?? globalThis.chrome;
  // Injected again after an extension reload: run once per live extension instance (an
  // overlay left by the previous instance is removed in ensureHost, when this one renders).
  const alive = () => {
    try {
      return Boolean(api?.runtime?.id);
    } catch {
      return false;
    }
  };
  if (globalThis.__orchestratorOverlay?.alive()) return;
  globalThis.__orchestratorOverlay = { alive };

  let view = null;
  let hidden = false;
  let open = false;
  let confirming = null; // the destructive action being confirmed
  let busy = null; // the action in flight
  let message = '';
  let lastStatus = null;
  let copied = null; // the last Copy page shape result: {ok, text}
  let host = null;
  let shadow = null;

  const CSS = `
    :host { all: initial; }
    * { box-sizing: border-box; }
    .box { font: 13px/1.4 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; color: #1c1e21;
      display: flex; flex-direction: column; align-items: flex-end; gap: 6px; }
    button { font: inherit; cursor: pointer; }
    :focus-visible { outline: 2px solid #2f62d8; outline-offset: 2px; }
    .pill { display: inline-flex; align-items: center; gap: 6px; padding: 4px 12px; border-radius: 999px;
      border: 1px solid #d5d9df; background: #ffffffee; color: #1c1e21; box-shadow: 0 2px 8px rgb(0 0 0 / .12);
      font-weight: 600; font-size: 12px; max-width: 360px; white-space: nowrap; overflow: hidden; text-overflow: ellipsis; }
    .glyph { font-size: 11px; }
    .tone-active .glyph { color: #1f4fb8; }
    .tone-attention { border-color: #7f4b00; background: #fff1d6; color: #7f4b00; }
    .tone-done .glyph { color: #1d6b3e; }
    .tone-bad { border-color: #a8231b; color: #a8231b; }
    .drawer { width: 320px; max-height: calc(100vh - 260px); overflow-y: auto; background: #fff; color: #1c1e21;
      border: 1px solid #d5d9df; border-radius: 10px; box-shadow: 0 8px 24px rgb(0 0 0 / .16); padding: 12px 14px;
      display: flex; flex-direction: column; gap: 10px; }
    .head { display: flex; align-items: flex-start; gap: 8px; }
    .head div { flex: 1; min-width: 0; }
    .title { font-weight: 650; font-size: 14px; margin: 0; }
    .name { font: 12px ui-monospace, Menlo, Consolas, monospace; color: #5d6470; margin: 0; }
    .close { border: 0; background: none; font-size: 18px; line-height: 1; padding: 2px 6px; color: #5d6470; border-radius: 4px; }
    dl { display: grid; grid-template-columns: max-content 1fr; gap: 3px 12px; margin: 0; }
    dt { color: #5d6470; }
    dd { margin: 0; font-weight: 550; }
    .override { border: 1px dashed currentColor; border-radius: 4px; padding: 0 4px; }
    .note, .warn { margin: 0; font-size: 12px; }
    .note { color: #5d6470; font-style: italic; }
    .warn { color: #7f4b00; background: #fff1d6; padding: 6px 8px; border-radius: 6px; }
    .actions { display: flex; flex-wrap: wrap; gap: 6px; }
    .btn { padding: 4px 10px; border-radius: 6px; border: 1px solid #cfd4da; background: #fff; color: #1c1e21; font-weight: 550; font-size: 12px; }
    .btn:disabled { opacity: .5; cursor: default; }
    .btn.danger { color: #b3261e; border-color: #b3261e; margin-left: auto; }
    .btn.danger::before { content: "■ "; font-size: 9px; }
    .btn.solid { background: #b3261e; color: #fff; }
    .confirm { border: 1px solid #b3261e; border-radius: 8px; padding: 8px 10px; display: flex; flex-direction: column; gap: 8px; }
    .confirm p { margin: 0; }
    .confirm .confirm-title { font-weight: 650; }
    .status:empty { display: none; }
    .status { margin: 0; font-size: 12px; color: #a8231b; }
    .diag { display: flex; flex-direction: column; gap: 6px; border-top: 1px solid #e3e6ea; padding-top: 8px; }
    .diag p { margin: 0; font-size: 12px; }
    .diag .layout { color: #5d6470; }
    .diag .copied { color: #1d6b3e; }
    h3 { font-size: 11px; text-transform: uppercase; letter-spacing: .05em; color: #5d6470; margin: 0; }
    ol { list-style: none; margin: 0; padding: 0; display: flex; flex-direction: column; gap: 2px; font-size: 12px; }
    time { font: 11px ui-monospace, Menlo, Consolas, monospace; color: #5d6470; margin-right: 6px; }
    .link { align-self: flex-start; border: 0; background: none; color: #2857c5; text-decoration: underline; padding: 0; font-size: 12px; }
    .choices p { margin: 0; font-size: 12px; color: #5d6470; }
    .choices ul { margin: 2px 0 0; padding-left: 18px; font-size: 12px; }
    .hide { align-self: flex-start; border: 0; background: none; color: #2857c5; text-decoration: underline; padding: 0; font-size: 12px; }
    .sr { position: absolute; width: 1px; height: 1px; overflow: hidden; clip: rect(0 0 0 0); white-space: nowrap; }
    @media (prefers-color-scheme: dark) {
      .box, .drawer, .pill, .btn { color: #e8eaed; }
      .pill, .drawer, .btn { background: #1e2125; border-color: #3a3f46; }
      .name, dt, .note, time, h3, .close, .choices p { color: #a1a8b3; }
      .tone-attention, .warn { background: #3d2c0f; color: #ffd08a; border-color: #ffd08a; }
      .tone-bad, .status { color: #ffaba5; border-color: #ffaba5; }
      .btn.danger { color: #ff8a80; border-color: #ff8a80; }
      .btn.solid { background: #b3261e; color: #fff; }
      .hide, .link { color: #8ab0ff; }
      .diag { border-color: #3a3f46; }
      .diag .layout { color: #a1a8b3; }
      .diag .copied { color: #8fd6a8; }
    }`;

  function h(tag, props = {}, ...children) {
    const el = document.createElement(tag);
    for (const [k, v] of Object.entries(props)) {
      if (v === null || v === undefined || v === false) continue;
      if (k === 'text') el.textContent = v;
      else if (k.startsWith('on')) el.addEventListener(k.slice(2), v);
      else el.setAttribute(k, v === true ? '' : String(v));
    }
    el.append(...children.flat().filter((c) => c !== null && c !== undefined && c !== false));
    return el;
  }

  /** A span of time as the other surfaces write it (view.js formatDuration): `12s`, `18m`, `2h 5m`, `1d 3h`. */
  function span(ms) {
    const s = Math.max(0, Math.floor(ms / 1000));
    if (s < 60) return `${s}s`;
    const m = Math.floor(s / 60);
    if (m < 60) return `${m}m`;
    const hours = Math.floor(m / 60);
    if (hours < 24) return m % 60 ? `${hours}h ${m % 60}m` : `${hours}h`;
    return hours % 24 ? `${Math.floor(hours / 24)}d ${hours % 24}h` : `${Math.floor(hours / 24)}d`;
  }

  /** Ages tick here, between updates: `just now`, `12s ago`, `18m ago`, `2h 5m ago`. */
  function age(atMs) {
    const ms = Date.now() - atMs;
    return ms < 5000 ? 'just now' : `${span(ms)} ago`;
  }

  /** The status note; a timed hold's countdown ticks here too, between updates. */
  function note(status) {
    const until = status.until;
    if (!until) return status.note;
    const left = until.untilMs - Date.now();
    return left > 0 ? `${until.label}: resumes in ${span(left)}` : `${until.label}: resumes once the page allows`;
  }

  function clock(atMs) {
    return new Date(atMs).toLocaleTimeString([], { hour: '2-digit', minute: '2-digit' });
  }

  function ensureHost() {
    if (!host) {
      // An overlay of a previous (reloaded) extension instance is dead: replace it.
      for (const stale of document.querySelectorAll('orchestrator-overlay')) stale.remove();
      host = document.createElement('orchestrator-overlay');
      host.setAttribute('data-testid', 'overlay-host');
      // `all: initial` without !important: an important reset would also pin letter and
      // word spacing, which people's own text-spacing stylesheets must be able to change
      // (WCAG 1.4.12; axe-core's avoid-inline-spacing). The placement stays important.
      host.style.cssText = 'all: initial; position: fixed !important; top: 64px !important; right: 16px !important;'
        + ' z-index: 2147483646 !important; display: block !important;';
      shadow = host.attachShadow({ mode: 'open' });
    }
    if (!host.isConnected) document.documentElement.append(host);
  }

  // `a`: one of the view's actions; its `message` is what goes to the daemon (Stop run names
  // the run, every other the worker). A Stop says where it came from.
  async function act(a) {
    confirming = null;
    busy = a.key;
    message = '';
    render();
    const text = a.destructive ? 'Stopped from the ChatGPT tab overlay' : undefined;
    let result;
    try {
      result = await api.runtime.sendMessage({ type: 'ui.action', ...a.message, text });
    } catch {
      result = { ok: false, error: { code: 'OFFLINE' } };
    }
    busy = null;
    if (!result?.ok) {
      const code = result?.error?.code;
      message = code === 'OFFLINE' ? 'Not connected: nothing was changed.'
        : code === 'TIMEOUT' ? 'No answer in time; the action may still apply.'
          : `Refused: ${result?.error?.message ?? 'unknown error'}`;
    }
    render();
    if (!shadow.activeElement) (shadow.querySelector(`[data-key="${a.key}"]`) ?? shadow.querySelector('[data-key="pill"]'))?.focus();
  }

  // The page as the readers see it now: the layout profile that matched, what is missing, what
  // the allow-list cannot name, whether the page failed closed (content.js's rule: loaded,
  // something missing, and no state of the page's own such as a log-in or a limit; something
  // not recognized; or the view says the adapter reported it), and the safety warning of an
  // approval card waiting on it ("Suspicious Instruction: …").
  function pageDiagnostics() {
    const readers = globalThis.OrcSelectors;
    let facts = null;
    try {
      facts = readers?.computeFacts(document) ?? null;
    } catch {
      facts = null;
    }
    const unreadable = facts !== null && facts.loaded && facts.missing.length > 0 && !readers.showsOwnState(facts);
    return {
      layout: facts?.layout ?? null,
      missing: facts?.missing ?? [],
      unrecognized: facts?.unrecognized ?? null,
      approvalWarning: typeof facts?.approval?.warning === 'string' && facts.approval.warning !== '' ? facts.approval.warning : null,
      failedClosed: unreadable || (facts?.unrecognized ?? null) !== null || Boolean(view.pageShape?.offered),
    };
  }

  async function copyPageShape() {
    const diagnostics = pageDiagnostics();
    let text;
    try {
      text = JSON.stringify(globalThis.OrcPageShape.pageShape(document,
        { layout: diagnostics.layout, missing: diagnostics.missing, unrecognized: diagnostics.unrecognized }));
    } catch (error) {
      copied = { ok: false, text: `Could not read the page shape: ${error?.message ?? error}` };
      render();
      return;
    }
    const kib = Math.max(1, Math.round(text.length / 1024));
    try {
      await writeClipboard(text);
      copied = { ok: true, text: `Copied (${kib} KiB): paste it into the bug report.` };
    } catch (error) {
      copied = { ok: false, text: `Could not copy: ${error?.message ?? error}` };
    }
    render();
    shadow.querySelector('[data-key="copy-shape"]')?.focus();
  }

  // The clipboard API needs the page focused; the older copy command covers the rest.
  async function writeClipboard(text) {
    try {
      await navigator.clipboard.writeText(text);
      return;
    } catch (error) {
      const area = h('textarea', { 'aria-hidden': 'true', style: 'position: fixed; opacity: 0;' });
      area.value = text;
      shadow.append(area);
      area.select();
      const done = document.execCommand('copy');
      area.remove();
      if (!done) throw error;
    }
  }

  function diagnosticsSection() {
    const d = pageDiagnostics();
    const shape = view.pageShape ?? { label: 'Copy page shape', hint: null, note: 'ChatGPT page not recognised' };
    const missing = d.missing.length > 0 ? ` (not found: ${d.missing.join(', ')})`
      : d.unrecognized !== null && !view.pageShape?.offered ? ` (not recognized: ${d.unrecognized.what} in the ${d.unrecognized.where})` : '';
    return h('section', { class: 'diag', 'aria-label': 'Page diagnostics', 'data-testid': 'overlay-diagnostics' },
      h('p', { class: 'layout', 'data-testid': 'overlay-layout', 'data-layout': d.layout ?? '', text: `Page layout: ${d.layout ?? 'none recognised'}` }),
      d.approvalWarning !== null && h('p', {
        class: 'warn', 'data-testid': 'overlay-approval-warning',
        text: `ChatGPT warns about this approval: "${d.approvalWarning}". Read it before you answer the card; the extension never answers it.`,
      }),
      d.failedClosed && h('p', { class: 'warn', 'data-testid': 'overlay-page-changed', text: `${shape.note}${missing}: the extension will not type here.` }),
      d.failedClosed && h('div', { class: 'actions' }, h('button', {
        type: 'button', class: 'btn', 'data-key': 'copy-shape', 'data-testid': 'overlay-copy-shape', title: shape.hint, onclick: () => copyPageShape(),
      }, shape.label)),
      copied && h('p', { class: copied.ok ? 'copied' : 'status', role: 'status', 'data-testid': 'overlay-copy-result', text: copied.text }));
  }

  function setOpen(next) {
    open = next;
    confirming = null;
    copied = null;
    render();
    shadow.querySelector(next ? '[data-key="close"]' : '[data-key="pill"]')?.focus();
  }

  function drawer() {
    const live = view.connection.live;
    const buttons = view.actions.map((a) => h('button', {
      type: 'button', class: `btn${a.destructive ? ' danger' : ''}`, title: a.hint, 'data-key': a.key,
      'data-testid': `overlay-action-${a.action}`, disabled: !live || busy !== null,
      'aria-busy': busy === a.key ? 'true' : null,
      onclick: () => {
        if (a.destructive) { confirming = a; render(); shadow.querySelector('[data-key="confirm-cancel"]')?.focus(); } else act(a);
      },
    }, a.label));
    return h('section', {
      id: 'orc-drawer', class: 'drawer', role: 'dialog', 'aria-modal': 'false', 'aria-labelledby': 'orc-title', 'data-testid': 'overlay-drawer',
      onkeydown: (e) => { if (e.key === 'Escape') setOpen(false); },
    },
    h('div', { class: 'head' },
      h('div', {}, h('p', { id: 'orc-title', class: 'title', text: view.title }), h('p', { class: 'name', text: view.name })),
      h('button', { type: 'button', class: 'close', 'aria-label': 'Close', 'data-key': 'close', 'data-testid': 'overlay-close', onclick: () => setOpen(false) }, '×')),
    !live && h('p', { class: 'warn', 'data-testid': 'overlay-connection' }, `${view.connection.label}: controls come back when connected.`),
    h('dl', {},
      h('dt', { text: 'Status' }), h('dd', { 'data-testid': 'overlay-status', 'data-status': view.status.key },
        h('span', { class: 'glyph', 'aria-hidden': 'true', text: `${view.status.glyph} ` }), view.status.label),
      h('dt', { text: 'Attempt' }), h('dd', { text: view.attemptText }),
      h('dt', { text: 'Auto resumes' }), h('dd', { text: String(view.autoResumes) }),
      h('dt', { text: 'Last progress' }), h('dd', { text: view.lastProgressAtMs === null ? 'none yet' : age(view.lastProgressAtMs) }),
      h('dt', { text: 'Auto Resume' }), h('dd', {}, h('span', { class: view.policyOverride ? 'override' : null, 'data-testid': 'overlay-policy', text: view.policyText }))),
    view.status.note && h('p', { class: 'note', 'data-testid': 'overlay-note', text: note(view.status) }),
    // Who carries it (its executor, connected or not, since when), unless the note says it.
    view.carrier && view.carrier !== view.status.note && h('p', { class: 'note', 'data-testid': 'overlay-carrier', text: view.carrier }),
    view.finished && h('p', { class: 'note', 'data-testid': 'overlay-finished', text: view.finished.outcome ? `${view.finished.label}: ${view.finished.outcome}` : `${view.finished.label}.` }),
    view.finished?.link && h('button', {
      type: 'button', class: 'link', 'data-key': 'finished-link', 'data-testid': 'overlay-finished-link',
      title: 'Open the dashboard at this run: how it ended, its workers, attempts and times', onclick: () => openDashboard(view.finished.link.hash),
    }, view.finished.link.label),
    view.needsYou && h('p', { class: 'warn', 'data-testid': 'overlay-question', text: `Needs you: ${view.needsYou}${view.answerable ? ' (answer from the dashboard)' : ''}` }),
    view.needsYou && view.choices?.length > 0 && h('div', { class: 'choices' },
      h('p', { id: 'orc-choices', text: 'Offered answers (choose one in the dashboard):' }),
      h('ul', { 'aria-labelledby': 'orc-choices', 'data-testid': 'overlay-choices' },
        view.choices.map((choice) => h('li', { 'data-testid': 'overlay-choice', text: choice })))),
    view.runStopped && h('p', { class: 'warn', 'data-testid': 'overlay-run-stopped', text: `Needs you: ${view.runStopped}` }),
    buttons.length > 0 && h('div', { class: 'actions' }, buttons),
    confirming && h('div', { class: 'confirm', role: 'alertdialog', 'aria-labelledby': 'orc-confirm', 'aria-describedby': 'orc-confirm-body', 'data-testid': 'overlay-confirm' },
      h('p', { id: 'orc-confirm', class: 'confirm-title', text: confirming.confirm?.title ?? `${confirming.label}?` }),
      h('p', { id: 'orc-confirm-body', 'data-testid': 'overlay-confirm-body', text: confirming.confirm?.body ?? '' }),
      h('div', { class: 'actions' },
        h('button', { type: 'button', class: 'btn', 'data-key': 'confirm-cancel', 'data-testid': 'overlay-confirm-cancel', onclick: () => { confirming = null; render(); } }, 'Cancel'),
        h('button', { type: 'button', class: 'btn danger solid', 'data-key': 'confirm-accept', 'data-testid': 'overlay-confirm-accept', onclick: () => act(confirming) },
          confirming.confirm?.confirmLabel ?? confirming.label))),
    h('p', { class: 'status', role: 'status', 'data-testid': 'overlay-message', text: message }),
    view.events.length > 0 && [h('h3', { text: 'Recent' }), h('ol', { 'data-testid': 'overlay-events' },
      view.events.map((e) => h('li', {}, h('time', { text: clock(e.atMs) }), e.text)))],
    diagnosticsSection(),
    h('button', {
      type: 'button', class: 'hide', 'data-key': 'hide', 'data-testid': 'overlay-hide', title: 'Show it again from the toolbar popup',
      onclick: () => hideEverywhere(),
    }, 'Hide overlay on all ChatGPT tabs'));
  }

  // The dashboard at `hash` (a finished run's card): the background opens it (a content
  // script cannot open extension pages itself).
  async function openDashboard(hash) {
    try {
      const result = await api.runtime.sendMessage({ type: 'ui.open', hash });
      message = result?.ok ? '' : 'Could not open the dashboard.';
    } catch {
      message = 'Could not open the dashboard.';
    }
    render();
  }

  async function hideEverywhere() {
    const { ui } = await api.storage.local.get('ui');
    await api.storage.local.set({ ui: { ...ui, overlayHidden: true } });
  }

  function render() {
    if (!view || hidden) {
      host?.remove();
      return;
    }
    ensureHost();
    const focused = shadow.activeElement?.dataset?.key;
    const changed = lastStatus !== null && lastStatus !== view.status.key;
    lastStatus = view.status.key;
    const pill = h('button', {
      type: 'button', class: `pill tone-${view.status.tone}`, 'aria-expanded': String(open), 'aria-controls': 'orc-drawer',
      'data-key': 'pill', 'data-testid': 'overlay-pill', 'data-status': view.status.key,
      title: `Orchestrator: ${view.title}`, onclick: () => setOpen(!open),
    }, h('span', { class: 'glyph', 'aria-hidden': 'true', text: view.connection.live ? view.status.glyph : '○' }),
    view.connection.live ? view.pill : `${view.pill} · ${view.connection.label}`);
    const announcer = shadow.querySelector('.sr') ?? h('p', { class: 'sr', 'aria-live': 'polite', 'data-testid': 'overlay-live' });
    if (changed) announcer.textContent = `${view.title}: ${view.status.label}`;
    shadow.replaceChildren(h('style', { text: CSS }), h('div', { class: 'box' }, pill, open && drawer()), announcer);
    if (focused) shadow.querySelector(`[data-key="${focused}"]`)?.focus();
  }

  api.runtime.onMessage.addListener((msg) => {
    if (msg?.type !== 'overlay.update') return;
    view = msg.view ?? null;
    if (!view) { open = false; lastStatus = null; }
    render();
  });

  api.storage.onChanged.addListener((changes, area) => {
    if (area !== 'local' || !('ui' in changes)) return;
    hidden = Boolean(changes.ui.newValue?.overlayHidden);
    render();
  });

  api.storage.local.get('ui').then(({ ui }) => {
    hidden = Boolean(ui?.overlayHidden);
    render();
  });

  setInterval(() => { if (open && view && !hidden) render(); }, 30_000);
})();
