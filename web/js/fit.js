// Fit to budget: the planner (POST /api/v1/plan) as the user steers it:
// a budget per device, the mechanisms it may use, whether it starts from
// the user's plan or from nothing; its proposal is shown beside the
// current plan (memory, step time, what changes) to accept or discard.
import { el, clear, gib, pct, rangesText, uid } from './util.js';
import { MECHANISMS, DEFAULT_YAML } from './store.js';
import { requestModel } from './model.js';
import { carriesRun, emptyConfig } from './state.js';
import { editConfigText } from './edit.js';

const MECH_LABEL = {
  select: 'select_module', full: 'full recompute', exclude: 'exclude_op', comm: 'recompute_comm',
  layer_swap: 'layer_swap', op_swap: 'op_swap',
};

const GIB = 2 ** 30;

// The device's capacity in bytes, from the last estimate that has one.
export function capacityOf(store) {
  for (const e of [store.estimate, store.lastGoodEstimate]) {
    if (e && e.ok && e.data && e.data.capacity_bytes) return e.data.capacity_bytes;
  }
  return null;
}

// The budget in bytes the two fields say: {bytes} (null: none given, the
// planner uses the capacity) or {error}. Headroom is what stays free below
// the capacity, in GiB or in % of it.
export function budgetBytes(f, cap) {
  if (f.from === 'headroom' && f.headroom !== '') {
    const h = Number(f.headroom);
    if (!cap) return { error: 'The headroom needs the device\'s capacity, which the estimate gives: set the Devices field, or give a budget.' };
    if (f.headroomUnit === '%') {
      if (!Number.isFinite(h) || h < 0 || h >= 100) return { error: 'The headroom must be at least 0 % and below 100 %.' };
      return { bytes: Math.floor(cap * (1 - h / 100)) };
    }
    if (!Number.isFinite(h) || h < 0 || h * GIB >= cap) return { error: `The headroom must be at least 0 GiB and below the capacity, ${gib(cap)}.` };
    return { bytes: Math.round(cap - h * GIB) };
  }
  if (f.budgetGiB === '') return { bytes: null };
  const v = Number(f.budgetGiB);
  if (!Number.isFinite(v) || v <= 0 || v > 1e6) return { error: 'The budget must be a positive number of GiB.' };
  return { bytes: Math.round(v * GIB) };
}

const two = (x) => String(Math.round(x * 100) / 100);

// The field the user did not set last, from the one set and the capacity.
export function followFields(f, cap) {
  if (f.from === 'headroom') {
    if (f.headroom === '') {
      f.budgetGiB = '';
      return;
    }
    const b = budgetBytes(f, cap);
    if (!b.error) f.budgetGiB = two(b.bytes / GIB);
    return;
  }
  const b = budgetBytes(f, cap);
  if (b.bytes === null || b.error || !cap) f.headroom = '';
  else f.headroom = two(f.headroomUnit === '%' ? (1 - b.bytes / cap) * 100 : (cap - b.bytes) / GIB);
}

// The config a fresh start plans: no plan, on the run on show. A whole
// training YAML keeps every other key (its run: parallel_config, offsets,
// dtypes, as the estimate prices them) with its three sections emptied;
// the three sections alone are no plan at all.
export function freshConfig(store) {
  if (!store.textIsYaml || !carriesRun(store.yaml)) return DEFAULT_YAML;
  return editConfigText(store.yaml, JSON.parse(store.cfgSynced), emptyConfig());
}

// {body, start, allow}: the request, or {error} when the settings cannot be sent.
export function planRequest(store) {
  const f = store.fit;
  const body = { config: f.start === 'fresh' ? freshConfig(store) : store.yaml, model: requestModel(store.model) };
  const b = budgetBytes(f, capacityOf(store));
  if (b.error) return { error: b.error };
  if (b.bytes !== null) body.budget = b.bytes;
  if (!f.allow.length) return { error: 'Choose at least one mechanism the planner may use.' };
  if (f.allow.length < MECHANISMS.length) body.allow = [...f.allow];
  return { body, start: f.start, allow: body.allow || null };
}

export function keyOf(cfg) {
  const r = cfg.recompute;
  const items = new Map();
  items.set('recompute mode', r.mode);
  items.set('full_recompute_layer', rangesText(r.full) || 'none');
  for (const e of r.select) items.set(`select_module '${e.pattern}'`, rangesText(e.ranges));
  for (const e of r.exclude) items.set(`exclude_op '${e.pattern}'`, rangesText(e.ranges));
  items.set('recompute_comm', cfg.comm.enable ? 'on' : 'off');
  for (const e of cfg.comm.select) items.set(`recompute_comm '${e.pattern}'`, rangesText(e.ranges));
  items.set('swap', cfg.swap.enable ? 'on' : 'off');
  cfg.swap.layerSwap.forEach((e, i) => items.set(`layer_swap[${i}]`, rangesText(e.ranges)));
  cfg.swap.opSwap.forEach((e) => items.set(`op_swap '${e.pattern}'`, rangesText(e.ranges)));
  return items;
}

// What the proposal changes, one phrase per key.
export function changes(before, after) {
  if (!after) return [];
  const a = keyOf(before);
  const b = keyOf(after);
  const out = [];
  for (const [k, v] of b) {
    if (!a.has(k)) out.push(`${k} ${v} (new)`);
    else if (a.get(k) !== v) out.push(`${k} ${a.get(k)} → ${v}`);
  }
  for (const [k, v] of a) if (!b.has(k)) out.push(`${k} ${v} (dropped)`);
  return out;
}

// The section a change belongs to: each is weighed alone against the
// current plan (one section of the proposal, the rest of the current plan).
const SECTION_OF = [[/^(recompute mode|full_recompute_layer|select_module|exclude_op)/, 'recompute'],
  [/^recompute_comm/, 'comm'], [/^(swap|layer_swap|op_swap)/, 'swap']];
const SECTION_LABEL = { recompute: 'recompute', comm: 'recompute_comm', swap: 'swap' };

export function sectionOf(change) {
  const hit = SECTION_OF.find(([re]) => re.test(change));
  return hit ? hit[1] : null;
}

// The sections the proposal changes: [{section, label, changes: [text]}].
export function changedSections(before, after) {
  const out = [];
  for (const c of changes(before, after)) {
    const sec = sectionOf(c);
    let g = out.find((x) => x.section === sec);
    if (!g) out.push(g = { section: sec, label: SECTION_LABEL[sec] || 'other', changes: [] });
    g.changes.push(c);
  }
  return out;
}

// The current config with one section taken from the proposal.
export function withSection(current, proposed, section) {
  const cfg = JSON.parse(JSON.stringify(current));
  cfg[section] = JSON.parse(JSON.stringify(proposed[section]));
  return cfg;
}

// What a section alone saves and costs against the current plan, in words.
export function whyText(w) {
  if (!w || w.error) return `alone from your plan: no figure (${w ? w.error : 'not estimated'})`;
  const saved = w.savedBytes;
  const cost = w.costSeconds;
  const s = saved >= 0 ? `saves ${gib(saved)} of peak` : `adds ${gib(-saved)} of peak`;
  const c = Math.abs(cost) < 5e-4 ? 'costs no step time'
    : cost > 0 ? `costs +${cost.toFixed(3)} s a step (+${pct(w.costPercent)})` : `saves ${(-cost).toFixed(3)} s a step`;
  return `alone from your plan: ${s}, ${c}`;
}

export function describeProposal(current, p) {
  const head = p.fits
    ? `Proposal fits the budget of ${gib(p.budget)}: peak ${gib(p.peak)}, step time +${pct(p.overhead)}`
    : `No plan fits ${gib(p.budget)}: the proposal has the smallest peak any plan reaches, ${gib(p.peak)} (step time +${pct(p.overhead)})`;
  const ch = changes(current, p.cfg);
  return `${head}. ${ch.length ? `Changes: ${ch.join('; ')}.` : 'It is the same as your plan.'} Accept or discard it below.`;
}

function buildForm(root, ctx) {
  const f = ctx.state.fit;
  const budgetId = uid('budget');
  const headroomId = uid('headroom');
  const unitId = uid('unit');
  // each field follows the other as it is typed in
  const sync = () => {
    followFields(f, capacityOf(ctx.state));
    if (f.from === 'headroom') root.querySelector('[data-key="fit/budget"]').value = f.budgetGiB;
    else root.querySelector('[data-key="fit/headroom"]').value = f.headroom;
  };
  const budget = el('input', {
    type: 'number', id: budgetId, min: 0.01, step: 0.01, class: 'num budget', value: f.budgetGiB,
    'aria-describedby': 'fit-budget-hint', dataset: { key: 'fit/budget' },
    on: { input: (e) => { f.budgetGiB = e.target.value.trim(); f.from = 'budget'; sync(); } },
  });
  const headroom = el('input', {
    type: 'number', id: headroomId, min: 0, step: 0.01, class: 'num budget', value: f.headroom,
    'aria-describedby': 'fit-budget-hint', dataset: { key: 'fit/headroom' },
    on: { input: (e) => { f.headroom = e.target.value.trim(); f.from = 'headroom'; sync(); } },
  });
  const unit = el('select', {
    id: unitId, 'aria-label': 'Headroom unit', dataset: { key: 'fit/headroom-unit' },
    on: {
      change: (e) => {
        f.headroomUnit = e.target.value;
        // the budget stays; the headroom is said in the other unit
        if (f.from === 'headroom' && f.headroom !== '') f.from = 'budget';
        sync();
      },
    },
  }, ['%', 'GiB'].map((u) => el('option', { value: u, text: u === '%' ? '% of capacity' : 'GiB', selected: f.headroomUnit === u })));
  const allow = el('fieldset', { class: 'fit-allow' }, el('legend', { text: 'The planner may use' }));
  for (const m of MECHANISMS) {
    const id = uid('allow');
    allow.append(el('span', { class: 'check' },
      el('input', {
        type: 'checkbox', id, checked: f.allow.includes(m), dataset: { key: `fit/allow/${m}` },
        on: {
          change: (e) => {
            f.allow = MECHANISMS.filter((x) => (x === m ? e.target.checked : f.allow.includes(x)));
          },
        },
      }),
      el('label', { for: id, text: MECH_LABEL[m] })));
  }
  const start = el('fieldset', { class: 'fit-start' }, el('legend', { text: 'Start from' }));
  for (const [v, text] of [['fresh', 'nothing (a fresh plan)'], ['mine', 'my plan (keep what it recomputes or swaps)']]) {
    const id = uid('start');
    start.append(el('span', { class: 'radio' },
      el('input', {
        type: 'radio', name: 'fit-start', id, value: v, checked: f.start === v, dataset: { key: `fit/start/${v}` },
        on: { change: () => { f.start = v; } },
      }),
      el('label', { for: id, text })));
  }
  root.append(el('div', { class: 'fit-form own-undo' },
    el('div', { class: 'field inline' },
      el('label', { for: budgetId, text: 'Budget per device (GiB)' }), budget,
      el('span', { class: 'or', text: 'or' }),
      el('label', { for: headroomId, text: 'headroom' }), headroom, unit,
      el('span', { id: 'fit-budget-hint', class: 'field-hint' })),
    allow, start,
    el('div', { class: 'fit-go' },
      el('button', { type: 'button', id: 'fit', 'aria-describedby': 'fit-status', on: { click: ctx.run } }, 'Fit to budget'),
      el('span', { id: 'fit-status', class: 'fit-status', role: 'status' }))),
  el('div', { id: 'fit-proposal' }));
}

function figure(label, v) {
  return el('td', { text: v === null || v === undefined ? '—' : label(v) });
}

// The changes by section, each section with what it saves and costs when
// it alone is applied to the current plan (p.why, filled by main.js).
function whyList(current, p) {
  const groups = changedSections(current, p.cfg);
  const ul = el('ul', { class: 'fit-changes', 'aria-label': 'What the proposal changes, and why' });
  for (const g of groups) {
    const w = p.why ? p.why[g.section] : null;
    ul.append(el('li', { dataset: { section: g.section } },
      el('strong', { text: `${g.label}: ` }), g.changes.join('; '),
      el('span', { class: 'why', text: ` — ${p.why ? whyText(w) : 'weighing…'}` })));
  }
  return el('div', {}, ul, el('p', { class: 'note', text: 'Each section is weighed alone: the proposal\'s section with the rest of your plan. The sections together can save more or less than their sum (a swapped layer that is also recomputed saves once).' }));
}

// ctx: {state, run(), accept(), discard()}
export function renderFit(root, ctx) {
  if (!root.querySelector('.fit-form')) buildForm(root, ctx);
  const store = ctx.state;
  const cap = capacityOf(store);
  const hint = root.querySelector('#fit-budget-hint');
  hint.textContent = cap ? `headroom: what stays free below the device's ${gib(cap)}; both empty: the whole capacity`
    : 'both empty: the device\'s capacity (the headroom needs it: set Devices)';
  // a new capacity (another device or model): the field set last stays
  followFields(store.fit, cap);
  for (const [k, v] of [['fit/budget', store.fit.budgetGiB], ['fit/headroom', store.fit.headroom]]) {
    const n = root.querySelector(`[data-key="${k}"]`);
    if (n !== document.activeElement && n.value !== v) n.value = v;
  }
  const box = clear(root.querySelector('#fit-proposal'));
  const p = store.fit.proposal;
  if (!p) return;
  const cur = p.current;
  const ch = changes(store.cfg, p.cfg);
  box.append(el('table', { class: 'fit-compare' },
    el('caption', { text: `The planner's proposal (${p.start === 'fresh' ? 'fresh plan' : 'from your plan'}${p.allow ? `, using ${p.allow.map((m) => MECH_LABEL[m]).join(', ')}` : ''})` }),
    el('thead', {}, el('tr', {}, el('th', { scope: 'col', text: 'Figure' }), el('th', { scope: 'col', text: 'Your plan' }), el('th', { scope: 'col', text: 'Proposal' }))),
    el('tbody', {},
      el('tr', {}, el('th', { scope: 'row', text: 'Peak' }), figure(gib, cur && cur.peak), figure(gib, p.peak)),
      el('tr', {}, el('th', { scope: 'row', text: 'Step time' }), figure((v) => `+${pct(v)}`, cur && cur.overhead), figure((v) => `+${pct(v)}`, p.overhead)),
      el('tr', {}, el('th', { scope: 'row', text: 'Budget' }), figure(gib, p.budget), figure((v) => (v ? '✓ fits' : '⚠ over'), p.fits)))),
    ch.length ? whyList(store.cfg, p) : el('p', { class: 'note', text: 'The proposal is your plan as it is.' }),
    el('div', { class: 'fit-actions' },
      el('button', { type: 'button', id: 'fit-accept', on: { click: ctx.accept } }, 'Accept the proposal'),
      el('button', { type: 'button', id: 'fit-discard', on: { click: ctx.discard } }, 'Discard')));
}
