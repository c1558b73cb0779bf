// Test builds only: a content script that relays `window.postMessage({orcTest: {id, op, arg}})`
// from a local fake page to the background's test hooks and posts the answer back as
// `{orcTestReply: {id, ok, value, error}}`.
(() => {
  const api = globalThis.browser ?? globalThis.chrome;
  window.addEventListener('message', (event) => {
    const request = event.source === window ? event.data?.orcTest : null;
    if (!request) return;
    Promise.resolve(api.runtime.sendMessage({ type: 'test.hook', op: request.op, arg: request.arg }))
      .catch((error) => ({ ok: false, error: String(error?.message ?? error) }))
      .then((reply) => window.postMessage({ orcTestReply: { id: request.id, ...(reply ?? { ok: false, error: 'no answer' }) } }, '*'));
  });
})();
