// Size the job (POST /api/v1/size): for the model in the editor, a device
// count (or a range) and a global batch, the fastest parallel layouts
// whose cheapest recompute / swap plan fits, in a table sortable by any
// column; the rejected layouts counted by reason.
import { el, svg, clear, gib } from './util.js';

const GIB = 2 ** 30;

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

// {body} for the request, or {error} when a field cannot be sent.
export function sizeRequest(f, model) {
  const dev = String(f.devices).trim();
  const range = /^(\d+)-(\d+)$/.exec(dev);
  let devices;
  if (range) devices = `${range[1]}-${range[2]}`;
  else if (/^\d+$/.test(dev) && Number(dev) >= 1) devices = Number(dev);
  else return { error: 'Devices must be a count, or a range such as 64-1024.' };
  const batch = Number(f.batch);
  if (!Number.isInteger(batch) || batch < 1) return { error: 'The global batch must be a positive whole number of sequences.' };
  const body = { model, devices, global_batch: batch, top: Number(f.top) || 10 };
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

function renderTable(box, state) {
  clear(box);
  if (!state.layouts.length) return;
  const head = el('tr', {}, COLUMNS.map((c) => el('th', {
    scope: 'col', 'aria-sort': state.sort.key === c.key ? state.sort.dir : 'none',
  }, el('button', {
    type: 'button', class: 'size-sort', text: c.label,
    on: { click: () => {
      state.sort = { key: c.key, dir: state.sort.key === c.key && state.sort.dir === 'ascending' ? 'descending' : 'ascending' };
      renderTable(box, state);
    } },
  }))));
  const body = sortedRows(state).map((l) => el('tr', { class: l.fits ? 'size-fits' : 'size-over' },
    COLUMNS.map((c) => el('td', { text: c.text ? c.text(l) : String(c.value(l)) }))));
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
  box.append(el('figure', { class: 'size-figure' }, chart,
    el('figcaption', { text: 'Peak (right: more memory) against step time (up: slower); larger points are on the memory / step-time front.' })));
}

function renderRejected(box, data) {
  clear(box);
  const reasons = Object.entries(data.rejected || {}).sort((a, b) => b[1] - a[1]);
  if (!reasons.length) return;
  box.append(el('details', {},
    el('summary', { text: `Rejected layouts: ${reasons.length} reasons` }),
    el('ul', {}, reasons.map(([why, n]) => el('li', { text: `${why}: ${n} layouts` })))));
}

// Mounts the panel in root; getModel() gives the model object the editor
// has (null before one is loaded); post(body) sends the request and
// answers {ok, data, problem} as api.js does.
export function mountSize(root, getModel, post) {
  clear(root);
  const state = { layouts: [], sort: { key: 'rank', dir: 'ascending' } };
  const status = el('p', { class: 'size-status', role: 'status', 'aria-live': 'polite' });
  const table = el('div', { class: 'size-results' });
  const rejected = el('div', { class: 'size-rejected' });
  const chart = el('div', { class: 'size-chart-box' });
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
    const req = sizeRequest(f, getModel());
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
      `${fitting} of the ${d.layouts.length} listed fit` +
      (d.smallest_devices ? `; the smallest device count that fits: ${d.smallest_devices}` : '') +
      (d.complete ? '.' : ' (the work limit stopped the search: the best found so far).');
    renderTable(table, state);
    renderChart(chart, state);
    renderRejected(rejected, d);
  });
  root.append(form, status, table, chart, rejected);
}
