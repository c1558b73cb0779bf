// The extension's copy of the daemon's continuity sentences (src/ui/event-text.js, for
// worker_events' event-log items) against the daemon's own words, pinned case by case in
// docs/protocol/fixtures/rules/sentences.json (written by executor-protocol's
// tests/sentences.rs), for every executor kind; and the timeline's labels
// (src/ui/timeline-model.js) for every attempt reason and outcome the daemon has.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { eventText, REASONS, OUTCOMES } from '../../src/ui/view.js';

const rule = JSON.parse(readFileSync(new URL('../../../docs/protocol/fixtures/rules/sentences.json', import.meta.url), 'utf8'));
const continuity = rule.cases.filter((c) => c.continuity);

test('the fixture covers the continuity events of every kind the daemon words', () => {
  assert.ok(continuity.length >= 60, `${continuity.length} continuity cases`);
  const names = new Set(continuity.map((c) => c.event.name));
  for (const name of ['worker.progress', 'worker.paused', 'worker.held', 'execution.scheduled', 'execution.ended', 'conversation.error', 'deadman.fired']) {
    assert.ok(names.has(name), name);
  }
});

for (const c of continuity) {
  for (const [kind, text] of Object.entries(c.text)) {
    const label = `${c.event.name} ${JSON.stringify(c.event.data)} for ${kind}`;
    test(`event-log sentence: ${label}`, () => {
      const said = eventText(c.event, kind);
      if (c.ambiguousInTheLog) {
        // The log's data is shared with other words: one of the cases' sentences.
        const shared = rule.cases.filter((o) => JSON.stringify(o.event) === JSON.stringify(c.event)).map((o) => o.text[kind]);
        assert.ok(shared.includes(said), `${said} is none of ${shared.join(' | ')}`);
      } else {
        assert.equal(said, text);
      }
    });
  }
}

test('the daemon\'s text wins over the copy', () => {
  const [c] = continuity;
  assert.equal(eventText({ ...c.event, text: ' Said by the daemon ' }, 'codex'), 'Said by the daemon');
});

test('the timeline labels every attempt reason and outcome the daemon has, and no other', () => {
  assert.deepEqual(Object.keys(REASONS).sort(), [...rule.attemptReasons].sort());
  assert.deepEqual(Object.keys(OUTCOMES).sort(), [...rule.attemptOutcomes].sort());
});
