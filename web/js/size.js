// Size the job (POST /api/v1/size): for the model in the editor, a device
// count (or a range) and a global batch, the fastest parallel layouts
// whose cheapest recompute / swap plan fits, in a table sortable by any
// column; the rejected layouts counted by reason. "Apply" puts a layout
// and its plan in the editor (one step of the page's undo); "Save" keeps
// a layout for the side-by-side comparison (in this browser).
import { el, svg, clear, gib } from './util.js';

const GIB = 2 ** 30;
const SAVED_KEY = 'memopt.size.saved';
const MAX_SAVED = 6;

const COLUMNS = [
  { key: 'rank', label: 'Rank', value: (l) => l.rank },
  { key: 'tp', label: 'TP', value: (l) => l.parallel.tensor_parallel },
  { key: 'pp', label: 'PP', value: (l) => l.parallel.pipeline_parallel },
  { key: 'vpp', label: 'VPP', value: (l) => l.parallel.virtual_pipeline },
  { key: 'cp', label: 'CP', value: (l) => l.parallel.context_parallel },
  { key: 'ep', label: 'EP', value: (l) => l.parallel.expert_parallel },
  { key: 'dp', label: 'DP', value: (l) => l.parallel.data_parallel },
  { key: 'sp', label: 'SP', value: (l) => (l.parallel.sequence_parallel ? 'on' : 'off') },
  { key: 'mbs', label: 'Micro-batch', value: (l) => l.training.micro_batch_size },
  { key: 'mbn', label: 'Micro-batches', value: (l) => l.training.micro_batch_num },
  { key: 'peak', label: 'Peak', value: (l) => l.peak_bytes, text: (l) => gib(l.peak_bytes) },
  { key: 'step', label: 'Step (s)', value: (l) => l.step_seconds, text: (l) => l.step_seconds.toFixed(3) },
  { key: 'tps', label: 'Tokens/s/device', value: (l) => l.tokens_per_second_per_device,
    text: (l) => Math.round(l.tokens_per_second_per_device).toString() },
  { key: 'mfu', label: 'MFU', value: (l) => l.mfu ?? 0, text: (l) => mfuText(l.mfu) },
  { key: 'plan', label: 'Plan', value: (l) => l.plan },
];

// Model FLOPs utilisation as a percentage ('-' when the answer has none).
export function mfuText(mfu) {
  return Number.isFinite(mfu) ? `${(100 * mfu).toFixed(1)}%` : '-';
}

// A MindSpore Transformers training YAML the server can write layouts into
// (its parallel_config or parallelism section).
export function isSizeBase(text) {
  return typeof text === 'string' && /^(parallel_config|parallelism)\s*:/m.test(text);
}

// A layout's name: its degrees and micro-batches.
export function layoutName(l) {
  const p = l.parallel, t = l.training;
  return `TP ${p.tensor_parallel} PP ${p.pipeline_parallel}${p.virtual_pipeline > 1 ? `x${p.virtual_pipeline}` : ''} ` +
    `CP ${p.context_parallel} EP ${p.expert_parallel} DP ${p.data_parallel} B ${t.micro_batch_size}x${t.micro_batch_num}`;
}

// {body} for the request, or {error} when a field cannot be sent. base: the
// editor's whole training YAML (each layout's config is then that file
// rewritten), or null.
export function sizeRequest(f, model, base = null) {
  const dev = String(f.devices).trim();
  const range = /^(\d+)-(\d+)$/.exec(dev);
  let devices;
  if (range) devices = `${range[1]}-${range[2]}`;
  else if (/^\d+$/.test(dev) && Number(dev) >= 1) devices = Number(dev);
  else return { error: 'Devices must be a count, or a range such as 64-1024.' };
  const batch = Number(f.batch);
  if (!Number.isInteger(batch) || batch < 1) return { error: 'The global batch must be a positive whole number of sequences.' };
  const body = { model, devices, global_batch: batch, top: Number(f.top) || 10 };
  if (isSizeBase(base)) body.base = base;
  if (String(f.budget).trim() !== '') {
    const b = Number(f.budget);
    if (!Number.isFinite(b) || b <= 0) return { error: 'The budget must be a positive number of GiB.' };
    body.budget = Math.round(b * GIB);
  }
  return { body };
}

function field(id, label, value, attrs = {}) {
  return el('div', { class: 'size-field' },
    el('label', { for: id, text: label }),
    el('input', { id, value, ...attrs }));
}

export function sortedRows(state) {
  const col = COLUMNS.find((c) => c.key === state.sort.key) || COLUMNS[0];
  const rows = [...state.layouts];
  rows.sort((a, b) => {
    const x = col.value(a), y = col.value(b);
    const c = x < y ? -1 : x > y ? 1 : 0;
    return state.sort.dir === 'ascending' ? c : -c;
  });
  return rows;
}

// The Apply and Save buttons of one layout.
function actionCell(l, ctx) {
  const name = layoutName(l);
  return el('td', { class: 'size-actions' },
    el('button', { type: 'button', class: 'small size-apply', 'aria-label': `Apply ${name}`, text: 'Apply',
      on: { click: () => ctx.apply(l) } }), ' ',
    el('button', { type: 'button', class: 'small size-save', 'aria-label': `Save ${name} for comparison`, text: 'Save',
      on: { click: () => ctx.save(l) } }));
}

function renderTable(box, state, ctx) {
  clear(box);
  if (!state.layouts.length) return;
  const head = el('tr', {}, COLUMNS.map((c) => el('th', {
    scope: 'col', 'aria-sort': state.sort.key === c.key ? state.sort.dir : 'none',
  }, el('button', {
    type: 'button', class: 'size-sort', text: c.label,
    on: { click: () => {
      state.sort = { key: c.key, dir: state.sort.key === c.key && state.sort.dir === 'ascending' ? 'descending' : 'ascending' };
      renderTable(box, state, ctx);
    } },
  }))), el('th', { scope: 'col', text: 'Actions' }));
  const body = sortedRows(state).map((l) => el('tr', { class: l.fits ? 'size-fits' : 'size-over' },
    COLUMNS.map((c) => el('td', { text: c.text ? c.text(l) : String(c.value(l)) })), actionCell(l, ctx)));
  box.append(el('table', { class: 'size-table' },
    el('caption', { text: 'Layouts: fitting first, fastest first (click a column to sort)' }),
    el('thead', {}, head), el('tbody', {}, body)));
}

// The chart's geometry: each layout at (peak, step) in a w x h box with
// `pad` pixels on every side, peak growing to the right and step time
// upwards (SVG y grows downwards); a single value spans the middle.
export function chartPoints(layouts, w, h, pad) {
  const span = (vals) => {
    const lo = Math.min(...vals), hi = Math.max(...vals);
    return hi > lo ? [lo, hi] : [lo - 1, hi + 1];
  };
  if (!layouts.length) return [];
  const [px0, px1] = span(layouts.map((l) => l.peak_bytes));
  const [sy0, sy1] = span(layouts.map((l) => l.step_seconds));
  return layouts.map((l) => ({
    rank: l.rank, fits: l.fits, pareto: l.pareto,
    x: pad + ((l.peak_bytes - px0) / (px1 - px0)) * (w - 2 * pad),
    y: h - pad - ((l.step_seconds - sy0) / (sy1 - sy0)) * (h - 2 * pad),
  }));
}

// Peak against step time, one point per layout listed (filled: fits; a
// ring: over the budget; larger: on the memory / step-time front).
function renderChart(box, state) {
  clear(box);
  if (!state.layouts.length) return;
  const W = 480, H = 240, PAD = 28;
  const pts = chartPoints(state.layouts, W, H, PAD);
  const peaks = state.layouts.map((l) => l.peak_bytes), steps = state.layouts.map((l) => l.step_seconds);
  const chart = svg('svg', { viewBox: `0 0 ${W} ${H}`, class: 'size-chart', role: 'img',
    'aria-label': `Peak memory against step time of the ${pts.length} layouts listed` },
  svg('line', { x1: PAD, y1: H - PAD, x2: W - PAD, y2: H - PAD, class: 'size-axis' }),
  svg('line', { x1: PAD, y1: PAD, x2: PAD, y2: H - PAD, class: 'size-axis' }),
  svg('text', { x: W / 2, y: H - 6, class: 'size-axis-label', 'text-anchor': 'middle',
    text: `peak ${gib(Math.min(...peaks))} to ${gib(Math.max(...peaks))}` }),
  svg('text', { x: 10, y: H / 2, class: 'size-axis-label', 'text-anchor': 'middle',
    transform: `rotate(-90 10 ${H / 2})`,
    text: `step ${Math.min(...steps).toFixed(3)} to ${Math.max(...steps).toFixed(3)} s` }),
  pts.map((p) => svg('circle', {
    cx: p.x.toFixed(1), cy: p.y.toFixed(1), r: p.pareto ? 5 : 3.5,
    class: p.fits ? 'size-point size-point-fits' : 'size-point size-point-over',
  }, svg('title', { text: `rank ${p.rank}${p.fits ? '' : ' (over the budget)'}` }))));
  const out = el('p', { class: 'readout', id: 'size-readout' });
  const circles = [...chart.querySelectorAll('circle')];
  const wrap = el('div', {
    class: 'chart-read', tabindex: 0, role: 'slider',
    'aria-label': `${chart.getAttribute('aria-label')}. Read the layouts one by one`,
    'aria-valuemin': 1, 'aria-valuemax': pts.length,
  }, chart);
  chart.setAttribute('aria-hidden', 'true');
  const say = (k) => {
    const i = Math.max(0, Math.min(pts.length - 1, k));
    wrap.cursor = i;
    circles.forEach((c, j) => c.classList.toggle('size-point-on', j === i));
    const text = pointText(state.layouts[i]);
    out.textContent = text;
    wrap.setAttribute('aria-valuenow', i + 1);
    wrap.setAttribute('aria-valuetext', text);
  };
  wrap.addEventListener('pointermove', (e) => {
    const r = chart.getBoundingClientRect();
    const vx = ((e.clientX - r.left) / Math.max(1, r.width)) * W;
    const vy = ((e.clientY - r.top) / Math.max(1, r.height)) * H;
    say(nearestPoint(pts, vx, vy));
  });
  wrap.addEventListener('keydown', (e) => {
    const step = { ArrowLeft: -1, ArrowDown: -1, ArrowRight: 1, ArrowUp: 1, PageDown: -10, PageUp: 10 }[e.key];
    if (step !== undefined) say(wrap.cursor === undefined ? 0 : wrap.cursor + step);
    else if (e.key === 'Home') say(0);
    else if (e.key === 'End') say(pts.length - 1);
    else return;
    e.preventDefault();
  });
  say(0);
  box.append(el('figure', { class: 'size-figure' }, wrap, out,
    el('figcaption', { text: 'Peak (right: more memory) against step time (up: slower); larger points are on the memory / step-time front. Hover a point, or focus the chart and use the arrow keys, to read a layout.' })));
}

// The index of the point nearest (x, y) in the chart's coordinates.
export function nearestPoint(pts, x, y) {
  let best = 0, bd = Infinity;
  pts.forEach((p, i) => {
    const d = (p.x - x) ** 2 + (p.y - y) ** 2;
    if (d < bd) { bd = d; best = i; }
  });
  return best;
}

// The read-out of one layout on the chart: its rank, name, peak, step
// time, MFU, whether it fits and its plan.
export function pointText(l) {
  return `Rank ${l.rank}: ${layoutName(l)}; peak ${gib(l.peak_bytes)}, step ${l.step_seconds.toFixed(3)} s, ` +
    `MFU ${mfuText(l.mfu)}, ${l.fits ? 'fits' : 'over the budget'}${l.pareto ? ', on the front' : ''}; plan: ${l.plan}`;
}

export function loadSaved() {
  try {
    const v = JSON.parse(localStorage.getItem(SAVED_KEY) || '[]');
    return Array.isArray(v) ? v.slice(-MAX_SAVED) : [];
  } catch {
    return [];
  }
}

function keepSaved(list) {
  try {
    localStorage.setItem(SAVED_KEY, JSON.stringify(list));
  } catch { /* a full or disabled storage keeps them for this page only */ }
}

// The saved list with l added (the same layout and plan once; the newest last).
export function withSaved(list, l) {
  const same = (x) => x.config === l.config && x.model === l.model;
  const { rank, ...kept } = l;
  return [...list.filter((x) => !same(x)), kept].slice(-MAX_SAVED);
}

// The rows of the comparison: every column of the table but the rank, the
// cells of each saved layout; `differs` when they are not all the same.
export function compareRows(saved) {
  return COLUMNS.filter((c) => c.key !== 'rank').map((c) => {
    const cells = saved.map((l) => (c.text ? c.text(l) : String(c.value(l))));
    return { label: c.label, cells, differs: new Set(cells).size > 1 };
  });
}

// The saved layouts side by side, one column each (rows that differ marked ≠).
function renderSaved(box, state, ctx) {
  clear(box);
  if (!state.saved.length) return;
  const rows = compareRows(state.saved).map((r) => el('tr', { class: r.differs ? 'differs' : null },
    el('th', { scope: 'row' }, r.label, r.differs ? el('span', { class: 'differs-mark', text: ' ≠', title: 'differs between the saved layouts' }) : null),
    ...r.cells.map((c) => el('td', { text: c }))));
  const actions = el('tr', {}, el('th', { scope: 'row', text: 'Actions' }),
    ...state.saved.map((l, i) => el('td', {},
      el('button', { type: 'button', class: 'small size-apply', 'aria-label': `Apply saved ${layoutName(l)}`, text: 'Apply', on: { click: () => ctx.apply(l) } }), ' ',
      el('button', { type: 'button', class: 'small size-remove', 'aria-label': `Remove saved ${layoutName(l)}`, text: 'Remove',
        on: { click: () => { state.saved = state.saved.filter((_, k) => k !== i); keepSaved(state.saved); renderSaved(box, state, ctx); } } }))));
  box.append(el('div', { class: 'size-compare-wrap', tabindex: 0, role: 'region', 'aria-label': 'Saved layouts side by side (scrollable)' },
    el('table', { class: 'size-compare variants' },
      el('caption', { text: 'Saved layouts side by side; rows marked ≠ differ' }),
      el('thead', {}, el('tr', {}, el('th', { scope: 'col', text: 'Layout' }),
        ...state.saved.map((l) => el('th', { scope: 'col', text: layoutName(l) })))),
      el('tbody', {}, ...rows), el('tfoot', {}, actions))));
}

// The rejected layouts by rule: each group's code (the rule, stable) and
// its words (the rule's numbers in them), most layouts first.
function renderRejected(box, data) {
  clear(box);
  const groups = (data.rejections || []).slice().sort((a, b) => b.count - a.count);
  if (!groups.length) return;
  const rules = new Set(groups.map((g) => g.code)).size;
  box.append(el('details', {},
    el('summary', { text: `Rejected layouts: ${rules} rules, ${groups.length} groups` }),
    el('ul', {}, groups.map((g) => el('li', { 'data-code': g.code },
      el('code', { text: g.code }), ` ${g.reason}: ${g.count} layouts`)))));
}

// Mounts the panel in root; getModel() gives the model the editor has, as
// every request of the page sends it (null before one is loaded); post(body) sends the request and
// answers {ok, data, problem} as api.js does. editor: {base() (the
// editor's whole training YAML, or null), apply(layout) (puts the
// layout's model and config in the editor; resolves to null, or what went
// wrong)}.
export function mountSize(root, getModel, post, editor = {}) {
  clear(root);
  const state = { layouts: [], sort: { key: 'rank', dir: 'ascending' }, saved: loadSaved() };
  const status = el('p', { class: 'size-status', role: 'status', 'aria-live': 'polite' });
  const table = el('div', { class: 'size-results' });
  const rejected = el('div', { class: 'size-rejected' });
  const chart = el('div', { class: 'size-chart-box' });
  const saved = el('div', { class: 'size-saved' });
  const ctx = {
    apply: async (l) => {
      if (!editor.apply) return;
      const why = await editor.apply(l, layoutName(l));
      status.textContent = why || `Applied ${layoutName(l)} to the editor (Undo takes it back).`;
    },
    save: (l) => {
      state.saved = withSaved(state.saved, l);
      keepSaved(state.saved);
      renderSaved(saved, state, ctx);
      status.textContent = `Saved ${layoutName(l)} for comparison.`;
    },
  };
  const form = el('form', { class: 'size-form' },
    field('size-devices', 'Devices (a count or a range)', '8', { type: 'text', inputmode: 'numeric' }),
    field('size-batch', 'Global batch (sequences)', '16', { type: 'number', min: '1', step: '1' }),
    field('size-budget', 'Budget per device (GiB, empty: the capacity)', '', { type: 'number', min: '0', step: 'any' }),
    field('size-top', 'Layouts to list', '10', { type: 'number', min: '1', step: '1' }),
    el('button', { type: 'submit', text: 'Size the job' }));
  form.addEventListener('submit', async (ev) => {
    ev.preventDefault();
    const f = {
      devices: root.querySelector('#size-devices').value, batch: root.querySelector('#size-batch').value,
      budget: root.querySelector('#size-budget').value, top: root.querySelector('#size-top').value,
    };
    const req = sizeRequest(f, getModel(), editor.base ? editor.base() : null);
    if (req.error) { status.textContent = req.error; return; }
    status.textContent = 'Searching the layouts…';
    const r = await post(req.body);
    if (!r.ok) {
      status.textContent = `The search failed: ${(r.problem && (r.problem.detail || r.problem.title)) || r.status}`;
      return;
    }
    const d = r.data;
    state.layouts = d.layouts.map((l, i) => ({ ...l, rank: i + 1 }));
    const fitting = d.layouts.filter((l) => l.fits).length;
    status.textContent = `${d.accepted} layouts accepted, ${d.estimated} estimated, ${d.planned} planned; ` +
      (d.layouts.length ? `${fitting} of the ${d.layouts.length} listed fit` : 'no layout fits the budget per device') +
      (d.smallest_devices ? `; the smallest device count that fits: ${d.smallest_devices}` : '') +
      (d.complete ? '.' : ' (the work limit stopped the search: the best found so far).');
    renderTable(table, state, ctx);
    renderChart(chart, state);
    renderRejected(rejected, d);
  });
  root.append(form, status, table, chart, rejected, saved);
  renderSaved(saved, state, ctx);
}
