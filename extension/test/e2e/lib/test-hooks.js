// Test builds only: background-side hooks the browser tests reach through a fake page
// (test-page-hooks.js relays `window.postMessage({orcTest})`). Imported beside the
// production background by the test build's wrapper; never part of a production build.
const api = globalThis.browser ?? globalThis.chrome;

/**
 * Every notification id the background asked to show, in order: Firefox ESR headless keeps
 * none for `notifications.getAll`, so tests count what was asked for in both browsers.
 */
const created = [];
if (api.notifications) {
  const create = api.notifications.create.bind(api.notifications);
  api.notifications.create = (id, options) => {
    created.push(id);
    return create(id, options);
  };
}

api.runtime.onMessage.addListener((message, sender, sendResponse) => {
  if (message?.type !== 'test.hook') return false;
  run(message.op, message.arg).then(
    (value) => sendResponse({ ok: true, value }),
    (error) => sendResponse({ ok: false, error: String(error?.message ?? error) }),
  );
  return true;
});

async function run(op, arg) {
  switch (op) {
    case 'storage':
      return api.storage.local.get(null);
    case 'reload':
      setTimeout(() => api.runtime.reload(), 50);
      return 'reloading';
    case 'notifications':
      // The ids of the browser notifications the extension shows now.
      return Object.keys(await api.notifications.getAll());
    case 'notificationsCreated':
      return created;
    case 'badge':
      // The toolbar button's badge and title (the watchdog's output).
      return { text: await api.action.getBadgeText({}), title: await api.action.getTitle({}) };
    case 'open':
      await api.tabs.create({ url: api.runtime.getURL(arg), active: true });
      return 'opened';
    default:
      throw new Error(`unknown test hook ${op}`);
  }
}
