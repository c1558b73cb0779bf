// Settings / Advanced: reads and writes the connection settings and limits through the
// background (`ui.settings.get` / `ui.settings.set`), checked first with the same rules
// the background applies (src/core/settings.js), so a wrong field is named before saving.
import { mergeSettings, appSelectionView, CONCURRENCY_MAX_RANGE, MANAGED_MAX_RANGE } from '../core/settings.js';
import { connectionView } from './view.js';
import { send, watchState, connectionBadge } from './dom.js';

const form = document.getElementById('form');
const status = document.getElementById('status');
const FIELDS = ['daemonUrl', 'token', 'executorId', 'appName', 'appDescription', 'concurrencyMax', 'managedMax'];
const NUMBERS = { concurrencyMax: CONCURRENCY_MAX_RANGE, managedMax: MANAGED_MAX_RANGE };
let stored = {};

function say(text, tone = 'info') {
  status.textContent = text;
  status.dataset.tone = tone;
}

/** The form's values, numbers as numbers (an empty or odd one becomes NaN, which fails the check). */
function formValues() {
  return Object.fromEntries(FIELDS.map((name) => {
    const raw = form.elements[name].value;
    return [name, name in NUMBERS ? (raw.trim() === '' ? NaN : Number(raw)) : raw];
  }));
}

async function loadSettings() {
  const answer = await send({ type: 'ui.settings.get' });
  if (answer?.ok === false) return say('Could not read the settings from the background.', 'error');
  stored = answer?.settings ?? answer ?? {};
  for (const name of FIELDS) form.elements[name].value = stored[name] ?? '';
  showAppSelection(stored);
}

// Whether workers' conversations get the app, said next to its fields (a warning when not).
function showAppSelection(settings) {
  const view = appSelectionView(settings);
  const line = document.getElementById('app-selection');
  line.textContent = view.text;
  line.dataset.tone = view.on ? 'info' : 'warn';
}

async function loadConnection() {
  const answer = await send({ type: 'ui.state' });
  document.getElementById('connection').replaceChildren(connectionBadge(connectionView(answer?.connection)));
}

form.addEventListener('submit', async (event) => {
  event.preventDefault();
  const { settings, errors } = mergeSettings(stored, formValues());
  for (const name of FIELDS) {
    form.elements[name].setAttribute('aria-invalid', errors[name] ? 'true' : 'false');
    const slot = document.getElementById(`${name}-error`);
    if (slot) slot.textContent = errors[name] ? `Expected ${errors[name].split(': expected ')[1]}.` : '';
  }
  const wrong = FIELDS.find((name) => errors[name]);
  if (wrong) {
    form.elements[wrong].focus();
    return say('Some fields need fixing.', 'error');
  }
  const answer = await send({ type: 'ui.settings.set', settings });
  if (answer?.ok === false) return say(`Not saved: ${answer.error?.message ?? answer.error?.code ?? 'the background refused'}.`, 'error');
  stored = settings;
  showAppSelection(stored);
  say('Saved. The extension reconnects with the new settings.');
});

document.getElementById('reveal').addEventListener('click', (event) => {
  const shown = form.elements.token.type === 'text';
  form.elements.token.type = shown ? 'password' : 'text';
  event.currentTarget.setAttribute('aria-pressed', String(!shown));
  event.currentTarget.textContent = shown ? 'Show' : 'Hide';
});

for (const [name, [min, max]] of Object.entries(NUMBERS)) Object.assign(form.elements[name], { min, max });
loadSettings();
watchState(loadConnection);
