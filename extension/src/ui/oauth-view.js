// Pure view logic of the dashboard's OAuth approval: the `oauth_pending` query's data
// (docs/protocol/executor.md) in, the view model of "Connections waiting for your approval"
// and "Connected clients" out. No DOM, no browser API, no clock: time is `nowMs`. Client
// names are what a client called itself when it registered: shown as text, marked
// self-registered, never trusted.
import { formatDuration, formatAge } from './view.js';

/** How often the dashboard asks for `oauth_pending` while it is open, in milliseconds. */
export const OAUTH_POLL_MS = 3000;

/** What a person sees in place of a scope name. */
const SCOPE_TEXT = { mcp: 'use the orchestrator tools', offline_access: 'stay signed in' };

/** `use the orchestrator tools, stay signed in`; unknown scopes by name. */
export function scopesText(scopes) {
  const list = Array.isArray(scopes) ? scopes.filter((s) => typeof s === 'string') : [];
  return list.length ? list.map((s) => SCOPE_TEXT[s] ?? s).join(', ') : 'no scopes';
}

/** `expires in 9m`, or `expired` once `expiresAtMs` has passed. */
export function expiresText(expiresAtMs, nowMs) {
  if (typeof expiresAtMs !== 'number') return 'expiry unknown';
  const left = expiresAtMs - nowMs;
  return left > 0 ? `expires in ${formatDuration(left)}` : 'expired';
}

const text = (value, fallback) => (typeof value === 'string' && value.trim() ? value : fallback);

/**
 * The section's view model from an `operator.data` answer (`{ok, data, error}`) or null
 * before the first answer: `shown` is false unless the daemon serves OAuth. Requests are
 * listed soonest to expire first; an expired one is left out (the daemon forgets it).
 */
export function oauthView(answer, nowMs) {
  const data = answer?.ok ? answer.data : null;
  if (!data?.enabled) return { shown: false, waiting: [], grants: [], error: null };
  const waiting = (Array.isArray(data.pending) ? data.pending : [])
    .filter((p) => typeof p?.code === 'string' && !(typeof p.expiresAtMs === 'number' && p.expiresAtMs <= nowMs))
    .sort((a, b) => (a.expiresAtMs ?? 0) - (b.expiresAtMs ?? 0))
    .map((p) => ({
      code: p.code,
      clientName: text(p.clientName, 'unnamed client'),
      selfRegistered: p.selfRegistered !== false,
      redirectHost: text(p.redirectHost, 'an unknown host'),
      scopesText: scopesText(p.scopes),
      expiresText: expiresText(p.expiresAtMs, nowMs),
      label: `${text(p.clientName, 'unnamed client')} (code ${p.code})`,
    }));
  const grants = (Array.isArray(data.grants) ? data.grants : [])
    .filter((g) => typeof g?.grantId === 'string')
    .map((g) => ({
      grantId: g.grantId,
      clientName: text(g.clientName, 'unnamed client'),
      scopesText: scopesText(g.scopes),
      connectedText: typeof g.createdAtMs === 'number' ? `connected ${formatAge(g.createdAtMs, nowMs)}` : 'connected',
      lastUsedText: typeof g.lastUsedAtMs === 'number' ? `last signed in ${formatAge(g.lastUsedAtMs, nowMs)}` : 'never signed in',
    }));
  return {
    shown: true,
    waiting,
    grants,
    error: null,
    waitingEmptyText: waiting.length ? null : 'No connection is waiting for your approval.',
    grantsEmptyText: grants.length ? null : 'No client is connected over OAuth.',
  };
}

/** The view model when the last query failed but an earlier one said OAuth is on. */
export function oauthFailedView(previous, error) {
  return { ...previous, error: `Could not refresh the connections: ${error?.message ?? error?.code ?? 'no answer'}` };
}
