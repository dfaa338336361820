// The layer map: one row per layer (MTP layers marked), one column per
// mechanism (full recompute, select per pattern, comm per pattern, layer
// swap, op swap, exclude_op). With a valid config it shows what POST
// /expand decided; otherwise what the ranges ask for, with the conflicts.
import { el, clear } from './util.js';
import { where } from './diags.js';

const TAG = { recompute: 'R', recompute_comm: 'C', swap: 'S', keep: 'K' };
const WORD = { recompute: 'recompute', recompute_comm: 'comm recompute', swap: 'swap', keep: 'keep' };

function within(ranges, l) {
  for (const [a, b] of ranges) if (l >= a && l <= b) return true;
  return false;
}

function short(paths) {
  if (!paths.length) return '';
  const first = paths[0] === '' ? 'whole layer' : paths[0];
  return paths.length > 1 ? `${first} +${paths.length - 1}` : first;
}

export function columns(cfg) {
  const cols = [{ id: 'full', title: 'Full recompute (full_recompute_layer)', head: 'full' }];
  if (cfg.recompute.select.length) {
    for (const e of cfg.recompute.select) cols.push({ id: `select:${e.pattern}`, title: `select '${e.pattern}'`, entry: e, kind: 'select' });
  } else cols.push({ id: 'select', title: 'select_module', head: 'select', empty: true });
  if (cfg.comm.select.length) {
    for (const e of cfg.comm.select) cols.push({ id: `comm:${e.pattern}`, title: `comm '${e.pattern}'`, entry: e, kind: 'comm' });
  } else cols.push({ id: 'comm', title: 'recompute_comm', head: 'comm', empty: true });
  cols.push({ id: 'layerSwap', title: 'Layer swap (layer_swap)', head: 'layer swap' },
    { id: 'opSwap', title: 'Op swap (op_swap)', head: 'op swap' }, { id: 'exclude', title: 'exclude_op', head: 'exclude' });
  return cols;
}

function matchesOn(layout, section, pkey, index, type) {
  if (!layout || !layout.patterns) return true;
  const p = layout.patterns.filter((x) => x.section === section && x.key === pkey)[index];
  return p ? (p.matches[type] || []).length > 0 : true;
}

// What the ranges ask for (no plan): {text, act, muted}
function requested(col, cfg, layout, l, type) {
  const r = cfg.recompute;
  const on = r.mode !== 'None';
  switch (col.id === 'full' ? 'full' : col.kind || col.id) {
    case 'full':
      if (!within(r.full, l)) return null;
      return on ? { act: 'recompute', text: 'whole layer' } : { muted: true, text: 'mode None' };
    case 'select': {
      if (!within(col.entry.ranges, l)) return null;
      const i = r.select.indexOf(col.entry);
      if (!on) return { muted: true, text: 'mode None' };
      return matchesOn(layout, 'recompute', 'select_module', i, type)
        ? { act: 'recompute', text: col.entry.pattern } : { muted: true, text: 'no match' };
    }
    case 'comm': {
      if (!within(col.entry.ranges, l)) return null;
      const i = cfg.comm.select.indexOf(col.entry);
      if (!cfg.comm.enable) return { muted: true, text: 'disabled' };
      return matchesOn(layout, 'recompute_comm', 'select_module', i, type)
        ? { act: 'recompute_comm', text: col.entry.pattern } : { muted: true, text: 'no match' };
    }
    case 'layerSwap': {
      const hits = cfg.swap.layerSwap.map((g, i) => (within(g.ranges, l) ? i : -1)).filter((i) => i >= 0);
      if (!hits.length) return null;
      return cfg.swap.enable ? { act: 'swap', text: `whole layer [${hits.join(', ')}]` } : { muted: true, text: 'disabled' };
    }
    case 'opSwap': {
      const hits = cfg.swap.opSwap.filter((e, i) => within(e.ranges, l) && matchesOn(layout, 'swap', 'op_swap', i, type));
      if (!hits.length) return null;
      return cfg.swap.enable ? { act: 'swap', text: short(hits.map((e) => e.pattern)) } : { muted: true, text: 'disabled' };
    }
    case 'exclude': {
      const hits = r.exclude.filter((e, i) => within(e.ranges, l) && matchesOn(layout, 'recompute', 'exclude_op', i, type));
      if (!hits.length) return null;
      return { act: 'keep', text: short(hits.map((e) => e.pattern)) };
    }
    default:
      return null;
  }
}

// What the expansion decided: {text, act, muted, paths}
function effective(col, cfg, layer, l) {
  const acts = layer.actions || [];
  const pick = (f) => acts.filter(f);
  const whole = acts.find((a) => a.path === '' && a.action === 'recompute');
  let hits = [];
  switch (col.id === 'full' ? 'full' : col.kind || col.id) {
    case 'full':
      hits = pick((a) => a.rule.key === 'full_recompute_layer' && a.path === '');
      break;
    case 'select':
      hits = pick((a) => a.rule.section === 'recompute' && a.rule.key === `select_module['${col.entry.pattern}']`);
      if (!hits.length && within(col.entry.ranges, l) && cfg.recompute.mode !== 'None') {
        return { muted: true, text: whole ? 'covered by full' : 'no match' };
      }
      break;
    case 'comm':
      hits = pick((a) => a.rule.section === 'recompute_comm' && a.rule.key === `select_module['${col.entry.pattern}']`);
      if (!hits.length && within(col.entry.ranges, l) && cfg.comm.enable) {
        return { muted: true, text: whole ? 'covered by full' : 'no match' };
      }
      break;
    case 'layerSwap':
      hits = pick((a) => a.rule.section === 'swap' && a.rule.key.startsWith('layer_swap'));
      break;
    case 'opSwap':
      hits = pick((a) => a.rule.section === 'swap' && a.rule.key.startsWith('op_swap'));
      break;
    case 'exclude':
      hits = pick((a) => a.rule.key.startsWith('exclude_op'));
      break;
    default:
      return null;
  }
  if (!hits.length) return null;
  const paths = hits.map((a) => a.path);
  return { act: hits[0].action, text: short(paths), paths, rule: hits[0].rule };
}

// One cell's look: {cls, tag, text, flag, title}; compared by signature so
// that an answer only touches the cells that changed (a 128-layer map
// re-laid out on every slider step costs more than the request).
export function cellOf(c, ctx, l, type, layerPlan, flags) {
  const { cfg, layout } = ctx;
  const v = c.empty ? null : layerPlan ? effective(c, cfg, layerPlan, l) : requested(c, cfg, layout, l, type);
  const out = { cls: 'cell', tag: '', text: '', flag: '', title: '' };
  if (v) {
    out.cls += v.muted ? ' muted' : ` a-${v.act}`;
    out.tag = v.muted ? '' : TAG[v.act];
    out.text = v.muted ? v.text : `${WORD[v.act]}: ${v.text}`;
    if (v.paths && v.paths.length > 1) out.title = v.paths.join(', ');
  }
  const mine = flags.filter((f) => !f.columns.size || f.columns.has(c.id));
  if (mine.length) {
    const sev = mine.some((f) => f.e.severity === 'error') ? 'error' : 'warning';
    out.cls += ` flag-${sev}`;
    out.flag = sev;
    out.title = mine.map((f) => `${f.e.d.message} (${where(f.e.d)})`).join('\n');
  }
  return out;
}

// A column head: the mechanism, and the pattern on a line of its own;
// long words break after '_' and '.'.
function headText(c) {
  const m = /^(select|comm) '(.*)'$/.exec(c.title);
  const soft = (t) => t.split(/(?<=[_.])/).flatMap((p, i) => (i ? [el('wbr'), p] : [p]));
  if (!m) return soft(c.head || c.title);
  return [m[1], ' ', el('code', { class: 'colpat' }, ...soft(m[2]))];
}

function paintCell(td, v) {
  const sig = `${v.cls}|${v.tag}|${v.text}|${v.flag}|${v.title}`;
  if (td.dataset.sig === sig) return;
  td.dataset.sig = sig;
  td.className = v.cls;
  clear(td);
  if (v.flag) {
    td.append(el('span', { class: 'cflag', 'aria-hidden': 'true', text: v.flag === 'error' ? '⚠' : '!' }),
      el('span', { class: 'vh', text: v.flag === 'error' ? 'conflict ' : 'warning ' }));
  }
  if (v.tag) td.append(el('span', { class: 'tag', 'aria-hidden': 'true', text: v.tag }));
  // with a tag the colour says it; the words are for screen readers and the tooltip
  if (v.text) td.append(el('span', { class: v.tag ? 'ct vh' : 'ct', text: v.text }));
  if (v.title || v.tag) td.title = v.title || v.text;
  else td.removeAttribute('title');
}

// The layer buttons are one Tab stop (roving tabindex): arrows, Page
// Up/Down, Home and End move between them.
function moveLayerFocus(e, body) {
  const btn = e.target.closest && e.target.closest('.layer-btn');
  if (!btn) return;
  const all = [...body.querySelectorAll('.layer-btn')];
  const i = all.indexOf(btn);
  const step = { ArrowDown: 1, ArrowUp: -1, PageDown: 10, PageUp: -10, Home: -Infinity, End: Infinity }[e.key];
  if (step === undefined) return;
  e.preventDefault();
  const j = Math.max(0, Math.min(all.length - 1, i + step));
  btn.tabIndex = -1;
  all[j].tabIndex = 0;
  all[j].focus();
  all[j].closest('tr').scrollIntoView({ block: 'nearest' });
}

function paintRowHead(th, l, mtp, rowSev, ctx) {
  const sig = `${mtp}|${rowSev}`;
  if (th.dataset.sig === sig) return;
  th.dataset.sig = sig;
  const old = th.querySelector('.layer-btn');
  const tabindex = old ? old.tabIndex : l === 0 ? 0 : -1;
  clear(th);
  th.append(...[el('button', {
    type: 'button', class: 'layer-btn', dataset: { key: `map/${l}` }, tabindex,
    'aria-label': `Layer ${l}${mtp ? ' (MTP)' : ''}${rowSev === 'error' ? ', conflict' : rowSev ? ', warning' : ''}: show every path (arrow keys: other layers)`,
    on: { click: () => ctx.onDetail(l) },
  }, String(l)),
  mtp ? el('span', { class: 'badge mtp-badge', text: 'M', title: 'multi-token prediction layer' }) : null].filter(Boolean));
}

// ctx: {cfg, layout, plan (layers from /expand or null), analysis, onDetail(l)}
export function renderMap(wrap, ctx) {
  const { cfg, layout, plan, analysis } = ctx;
  if (!layout) {
    clear(wrap).append(el('p', { class: 'note', text: 'Loading the model…' }));
    return;
  }
  const cols = columns(cfg);
  const n = layout.num_layers + layout.mtp_num_layers;
  const shape = `${n}|${layout.types.map((t) => t.name).join(',')}|${cols.map((c) => c.id).join('\u0001')}`;
  let table = wrap.querySelector('table.map');
  if (!table || table.dataset.shape !== shape) {
    clear(wrap);
    table = el('table', { class: 'map', id: 'layer-map', dataset: { shape } });
    table.append(el('caption', { class: 'vh' }),
      el('colgroup', {}, el('col', { class: 'c-layer' }), el('col', { class: 'c-type' }), cols.map(() => el('col', {}))));
    const head = el('tr', {}, el('th', { scope: 'col', text: 'Layer' }), el('th', { scope: 'col', text: 'Type' }));
    for (const c of cols) head.append(el('th', { scope: 'col', class: 'colh', title: c.title, dataset: { col: c.id } }, ...headText(c)));
    table.append(el('thead', {}, head));
    const body = el('tbody');
    for (let l = 0; l < n; l += 1) {
      const mtp = l >= layout.num_layers;
      const tr = el('tr', { dataset: { layer: l }, class: mtp ? 'mtp' : null },
        el('th', { scope: 'row', class: 'lh' }),
        el('td', { class: 'type', text: layout.types[layout.layer_types[l]].name }));
      for (const c of cols) tr.append(el('td', { class: 'cell', dataset: { col: c.id } }));
      body.append(tr);
    }
    table.append(body);
    wrap.append(table);
    body.addEventListener('keydown', (e) => moveLayerFocus(e, body));
  }
  table.caption.textContent = `What each of the ${n} layers does${plan ? ' after expansion' : ' as the ranges ask (not expanded: the config has errors or is being checked)'}`;
  const rows = table.tBodies[0].rows;
  const mem = memByLayer(ctx.memory, n);
  for (let l = 0; l < n; l += 1) {
    const type = layout.layer_types[l];
    paintMemory(rows[l].cells[1], layout.types[type].name, mem.layers[l], mem.max);
    const mtp = l >= layout.num_layers;
    const flags = (analysis && analysis.byLayer.get(l)) || [];
    const rowSev = flags.some((f) => f.e.severity === 'error') ? 'error' : flags.length ? 'warning' : '';
    const tr = rows[l];
    tr.className = [mtp ? 'mtp' : '', rowSev ? `row-${rowSev}` : ''].join(' ').trim();
    paintRowHead(tr.cells[0], l, mtp, rowSev, ctx);
    const layerPlan = plan ? plan[l] : null;
    cols.forEach((c, i) => paintCell(tr.cells[i + 2], cellOf(c, ctx, l, type, layerPlan, flags)));
  }
}

// Per layer, what the estimate keeps of it for one micro-batch (the
// estimate's per-layer figures), and the largest, for the bars.
function memByLayer(layers, n) {
  const out = { layers: new Array(n).fill(null), max: 0 };
  for (const x of layers || []) {
    if (x.layer < 0 || x.layer >= n) continue;
    out.layers[x.layer] = x;
    out.max = Math.max(out.max, x.activation_bytes, x.baseline_activation_bytes || 0);
  }
  return out;
}

const mib = (b) => `${(b / 1048576).toFixed(b < 10 * 1048576 ? 2 : 0)} MiB`;

// The type cell carries the layer's kept memory: a bar (its share of the
// largest layer's, before the plan as a lighter bar) and the figure in
// words for screen readers and on hover.
function paintMemory(td, typeName, x, max) {
  const sig = x ? `${x.activation_bytes}|${x.baseline_activation_bytes}|${max}` : '';
  if (td.dataset.mem === sig) return;
  td.dataset.mem = sig;
  clear(td);
  td.append(typeName);
  if (!x || !max) {
    td.removeAttribute('title');
    td.style.removeProperty('--mem');
    td.style.removeProperty('--mem0');
    td.classList.remove('mem');
    return;
  }
  const words = `keeps ${mib(x.activation_bytes)} a micro-batch${x.baseline_activation_bytes !== x.activation_bytes ? ` (${mib(x.baseline_activation_bytes)} without the plan)` : ''}`;
  td.classList.add('mem');
  td.style.setProperty('--mem', `${(100 * x.activation_bytes / max).toFixed(1)}%`);
  td.style.setProperty('--mem0', `${(100 * (x.baseline_activation_bytes || 0) / max).toFixed(1)}%`);
  td.title = `Layer ${x.layer} ${words}`;
  td.append(el('span', { class: 'vh', text: `, ${words}` }));
}

export function renderLegend(p) {
  clear(p);
  for (const [act, tag] of Object.entries(TAG)) {
    p.append(el('span', { class: `lg a-${act}` }, el('span', { class: 'tag', 'aria-hidden': 'true', text: tag }), ` ${WORD[act]}`), ' ');
  }
  p.append(el('span', { class: 'lg flag-error' }, '⚠ conflict'), ' ',
    el('span', { class: 'lg muted' }, 'named, no effect'), ' ',
    el('span', { class: 'lg' }, el('span', { class: 'badge mtp-badge', text: 'MTP' }), ' multi-token prediction layer'), ' ',
    el('span', { class: 'lg' }, el('span', { class: 'mem-key', 'aria-hidden': 'true' }), ' bar under the type: what the layer keeps for one micro-batch (light: without the plan)'));
}

export function renderDetail(box, l, layout, plan) {
  clear(box);
  if (l === null || l === undefined) return;
  const head = el('h3', { tabindex: -1, id: 'detail-heading', text: `Layer ${l}${l >= layout.num_layers ? ' (MTP)' : ''} — ${layout.types[layout.layer_types[l]].name}` });
  box.append(head);
  if (!plan || !plan[l]) {
    box.append(el('p', { class: 'note', text: 'The config has errors: fix them to see what every path of this layer does.' }));
    return head;
  }
  if (!plan[l].paths) { // asked for once a layer is opened (the answer is light without them)
    box.append(el('p', { class: 'note', text: 'Reading every path of this layer…' }));
    return head;
  }
  const groups = {};
  for (const [path, act] of Object.entries(plan[l].paths)) (groups[act] || (groups[act] = [])).push(path);
  const dl = el('dl', { class: 'detail' });
  for (const act of ['recompute', 'recompute_comm', 'swap', 'keep']) {
    const paths = groups[act] || [];
    dl.append(el('dt', { class: `a-${act}` }, el('span', { class: 'tag', 'aria-hidden': 'true', text: TAG[act] }), ` ${WORD[act]} (${paths.length})`),
      el('dd', {}, paths.length ? el('code', { text: paths.join(', ') }) : '—'));
  }
  box.append(dl);
  return head;
}
