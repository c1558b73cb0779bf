// Draws a worker's timeline (geometry from timeline-model.js) as an SVG picture: one row
// per execution attempt, its bar coloured by reason, its reason written on the left and
// its outcome (glyph and words) on the right; progress marks as diamonds with dotted
// lines; clock ticks below. The picture is `role=img` with a text summary.
import { h } from './dom.js';
import { clockLabel, countText } from './view.js';

const NS = 'http://www.w3.org/2000/svg';

function s(tag, attrs = {}, ...children) {
  const el = document.createElementNS(NS, tag);
  for (const [k, v] of Object.entries(attrs)) if (v !== null && v !== undefined) el.setAttribute(k, String(v));
  el.append(...children.flat().filter(Boolean));
  return el;
}

const title = (text) => s('title', {}, text);

/** The SVG for `geo` (timelineView's result) of the worker called `name`. */
export function timelineSvg(geo, name, tzOffsetMin) {
  const id = `tl-${Math.random().toString(36).slice(2, 8)}`;
  const span = `${clockLabel(geo.startMs, tzOffsetMin)} to ${clockLabel(geo.endMs, tzOffsetMin)}`;
  const summary = `${countText(geo.rows.length, 'attempt')} shown, ${span}; ${countText(geo.marks.length, 'progress mark')}.`;
  return s('svg', {
    class: 'timeline', viewBox: `0 0 ${geo.width} ${geo.height}`, width: geo.width, height: geo.height, role: 'img',
    'aria-labelledby': `${id}-t ${id}-d`, 'data-testid': 'timeline-svg', preserveAspectRatio: 'xMinYMin meet',
  },
  s('title', { id: `${id}-t` }, `Timeline of ${name}`),
  s('desc', { id: `${id}-d` }, summary),
  geo.ticks.map((t) => s('g', { class: 'tick' },
    s('line', { x1: t.x, x2: t.x, y1: geo.rowsTop - 4, y2: geo.rowsBottom }),
    s('text', { x: t.x, y: geo.rowsBottom + 14, 'text-anchor': 'middle' }, t.label))),
  s('line', { class: 'axis', x1: geo.plotX0, x2: geo.plotX1, y1: geo.rowsBottom, y2: geo.rowsBottom }),
  geo.marks.map((m) => s('g', { class: 'mark', 'data-testid': 'timeline-mark' },
    title(m.label),
    s('line', { x1: m.x, x2: m.x, y1: geo.markY + 5, y2: geo.rowsBottom }),
    s('path', { d: `M${m.x} ${geo.markY - 5} l5 5 l-5 5 l-5 -5 z` }))),
  geo.rows.map((r) => {
    const mid = r.y + r.height / 2;
    return s('g', { class: `attempt r-${r.reasonKey} o-${r.outcome.tone}`, 'data-testid': 'timeline-attempt', 'data-reason': r.reasonKey, 'data-outcome': r.outcome.key },
      title(r.title),
      s('text', { class: 'label', x: geo.plotX0 - 8, y: mid, 'text-anchor': 'end', 'dominant-baseline': 'central' }, r.label),
      r.lead && s('rect', { class: 'lead', x: r.lead.x, y: r.y + 4, width: r.lead.width, height: r.height - 8, rx: 2 }),
      r.bar && s('rect', { class: `bar${r.outcome.open ? ' open' : ''}`, x: r.bar.x, y: r.y, width: r.bar.width, height: r.height, rx: 3 }),
      s('text', { class: 'outcome', x: geo.plotX1 + 8, y: mid, 'dominant-baseline': 'central' }, `${r.outcome.glyph} ${r.outcome.label}`));
  }));
}

/** The key under the picture: reason swatches, the progress mark, and how to read a bar. */
export function timelineLegend(geo) {
  return h('ul', { class: 'legend', 'aria-label': 'Timeline key' },
    geo.legend.map((l) => h('li', {}, h('span', { class: `swatch r-${l.key}`, 'aria-hidden': 'true' }), l.label)),
    h('li', {}, h('span', { class: 'swatch mark', 'aria-hidden': 'true', text: '◆' }), 'Progress'),
    h('li', { class: 'muted' }, 'Thin bar: waiting to be sent · dashed edge: still running'));
}
