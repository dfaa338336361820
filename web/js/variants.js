// Saved variants: the plan as it is now, saved under a name with its
// figures (peak against the device, step time, tokens/s, MFU) and what it
// sets, compared side by side with the current plan; a variant loads back
// into the YAML panel with the model and layout it was priced on (its
// figures are of that run, not of the model shown when it is loaded). They
// are kept in this browser (localStorage).
import { el, clear, gib, pct } from './util.js';
import { keyOf } from './fit.js';

const STORE_KEY = 'memopt.variants';
const MAX_VARIANTS = 8;

export function loadVariants() {
  try {
    const v = JSON.parse(localStorage.getItem(STORE_KEY) || '[]');
    return Array.isArray(v) ? v.slice(0, MAX_VARIANTS) : [];
  } catch {
    return [];
  }
}

export function keepVariants(list) {
  try {
    localStorage.setItem(STORE_KEY, JSON.stringify(list));
  } catch { /* a full or disabled storage keeps them for this page only */ }
}

// The figures of an estimate answer a variant keeps (null without one).
export function figuresOf(est) {
  if (!est || !est.stages || !est.stages.length) return null;
  const t = est.time || {};
  return {
    peak: est.peak_bytes, capacity: est.capacity_bytes, overhead: est.overhead_percent ?? 0,
    step: t.step_seconds ?? null, tps: t.tokens_per_second_per_device ?? null, mfu: t.mfu ?? null,
  };
}

// The layout a figure is priced on, in the parallel fields' words: the
// model priced (a training YAML's run read over the model: the estimate
// answer's run.model) or the model as the fields edited it.
export function layoutText(obj) {
  if (!obj) return '—';
  const p = obj.parallel || {};
  const t = obj.training || {};
  const seq = (obj.model || {}).seq_length;
  return [`${p.world_size ?? '?'} devices`, `TP ${p.tensor_parallel ?? 1}`, `PP ${p.pipeline_parallel ?? 1}`,
    `CP ${p.context_parallel ?? 1}`, `EP ${p.expert_parallel ?? 1}`, `DP ${p.data_parallel ?? '?'}`,
    `SP ${p.sequence_parallel ? 'on' : 'off'}`, `micro-batch ${t.micro_batch_size ?? '?'} × ${t.micro_batch_num ?? '?'}`,
    `sequence ${seq ?? '?'}`].join(' · ');
}

// A variant of the state s ({yaml, cfg, model, training, priced}, the
// store's members) with the figures of its estimate: the text, what it
// sets, and the run it was priced on, which Load brings back with the text.
export function variantOf(name, s, est) {
  return {
    name, yaml: s.yaml, model: s.model.label, keys: [...keyOf(s.cfg)], figures: figuresOf(est),
    layout: layoutText(s.priced && s.priced.model ? s.priced.model : s.model.obj),
    run: JSON.parse(JSON.stringify({ model: s.model, training: s.training })),
  };
}

const FIGURE_ROWS = [
  ['Model', (v) => v.model || '—'],
  ['Layout', (v) => v.layout || '—'],
  ['Peak', (v) => (v.figures ? gib(v.figures.peak) : '—')],
  ['Device', (v) => (!v.figures ? '—' : v.figures.peak > v.figures.capacity
    ? `⚠ over by ${gib(v.figures.peak - v.figures.capacity)}` : `✓ fits, ${gib(v.figures.capacity - v.figures.peak)} free`)],
  ['Step time', (v) => (v.figures && v.figures.step ? `${v.figures.step.toFixed(3)} s` : '—')],
  ['Plan overhead', (v) => (v.figures ? `+${pct(v.figures.overhead)}` : '—')],
  ['Tokens/s per device', (v) => (v.figures && v.figures.tps ? Math.round(v.figures.tps).toLocaleString('en-US') : '—')],
  ['MFU', (v) => (v.figures && v.figures.mfu ? pct(v.figures.mfu * 100) : '—')],
];

// ctx: {variants, current (a variant of the plan as it is now), save(name),
// load(i), remove(i)}
export function renderVariants(root, ctx) {
  if (!root.querySelector('.variant-form')) {
    const input = el('input', { type: 'text', id: 'variant-name', maxlength: 40, dataset: { key: 'variant/name' }, placeholder: 'e.g. full 0-15' });
    root.append(el('div', { class: 'variant-form own-undo' },
      el('label', { for: 'variant-name', text: 'Name' }), input,
      el('button', {
        type: 'button', id: 'variant-save', 'aria-describedby': 'variant-status',
        on: { click: () => { ctx.save(input.value.trim()); input.value = ''; } },
      }, 'Save this plan as a variant'),
      el('span', { id: 'variant-status', class: 'field-hint', role: 'status' })),
    el('div', { id: 'variant-table' }));
  }
  const box = clear(root.querySelector('#variant-table'));
  root.querySelector('#variant-save').disabled = !ctx.current.figures;
  if (!ctx.variants.length) {
    box.append(el('p', { class: 'note', text: 'No variant saved yet: save the plan as it is, change it, save again, and the variants are compared here side by side.' }));
    return;
  }
  const cols = [{ ...ctx.current, name: 'Now' }, ...ctx.variants];
  const keyNames = [];
  for (const v of cols) for (const [k] of v.keys) if (!keyNames.includes(k)) keyNames.push(k);
  const valueOf = (v, k) => (v.keys.find(([x]) => x === k) || [null, '—'])[1];
  const row = (label, cells) => {
    const differs = new Set(cells).size > 1;
    return el('tr', { class: differs ? 'differs' : null },
      el('th', { scope: 'row' }, label, differs ? el('span', { class: 'differs-mark', text: ' ≠', title: 'differs between the variants' }) : null),
      ...cells.map((c) => el('td', { text: c })));
  };
  const table = el('table', { class: 'variants' },
    el('caption', { class: 'vh', text: 'The current plan and the saved variants side by side; rows marked ≠ differ' }),
    el('thead', {}, el('tr', {}, el('th', { scope: 'col', text: 'Figure' }), ...cols.map((v) => el('th', { scope: 'col', text: v.name })))),
    el('tbody', {},
      ...FIGURE_ROWS.map(([label, f]) => row(label, cols.map(f))),
      ...keyNames.map((k) => row(k, cols.map((v) => valueOf(v, k))))),
    el('tfoot', {}, el('tr', {}, el('th', { scope: 'row', text: 'Actions' }), el('td', {}),
      ...ctx.variants.map((v, i) => el('td', {},
        el('button', { type: 'button', class: 'small', dataset: { key: `variant/load/${i}` }, 'aria-label': `Load ${v.name}`, on: { click: () => ctx.load(i) } }, 'Load'),
        ' ',
        el('button', { type: 'button', class: 'small', dataset: { key: `variant/remove/${i}` }, 'aria-label': `Remove ${v.name}`, on: { click: () => ctx.remove(i) } }, 'Remove'))))));
  box.append(el('div', { class: 'variants-wrap', tabindex: 0, role: 'region', 'aria-label': 'Variants side by side (scrollable)' }, table));
}
