// The layer strip: every mechanism of every layer at once (one lane per
// layer-map column, one cell per layer, 128 layers in a row), with the
// conflicts marked, where a range is painted with the mouse, a finger or
// the keyboard. A drag that starts on a layer the lane does not name adds
// the dragged layers to it; one that starts on a named layer removes them.
// Keyboard: each lane is a slider over the layers (arrows, Home / End);
// Shift+arrows widen a selection; Space or Enter paints it.
import { el, clear, rangesText } from './util.js';
import { columns, cellOf } from './layermap.js';

// [lo, hi] pairs with layers a..b added (merged, ascending).
export function addLayers(ranges, a, b) {
  const all = [...ranges, [a, b]].sort((x, y) => x[0] - y[0]);
  const out = [];
  for (const [lo, hi] of all) {
    const last = out[out.length - 1];
    if (last && lo <= last[1] + 1) last[1] = Math.max(last[1], hi);
    else out.push([lo, hi]);
  }
  return out;
}

// [lo, hi] pairs with layers a..b removed.
export function removeLayers(ranges, a, b) {
  const out = [];
  for (const [lo, hi] of ranges) {
    if (hi < a || lo > b) out.push([lo, hi]);
    else {
      if (lo < a) out.push([lo, a - 1]);
      if (hi > b) out.push([b + 1, hi]);
    }
  }
  return out;
}

// The list a lane paints: its ranges, and how to store new ones.
function laneList(cfg, col) {
  const r = cfg.recompute;
  const s = cfg.swap;
  if (col.id === 'full') return { get: () => r.full, set: (v) => { r.full = v; } };
  if (col.entry) return { get: () => col.entry.ranges, set: (v) => { col.entry.ranges = v; } };
  if (col.id === 'layerSwap') {
    return {
      get: () => s.layerSwap.flatMap((e) => e.ranges),
      set: (v) => { s.layerSwap = v.length ? [{ ranges: v }] : []; },
    };
  }
  return null; // op_swap, exclude_op, empty lanes: patterns are edited in the controls
}

function named(ranges, l) {
  return ranges.some(([a, b]) => l >= a && l <= b);
}

// ctx: {cfg, layout, plan, analysis, paint(label, key)}: paint is called after a lane changed cfg
export function renderStrip(root, ctx) {
  const { cfg, layout, plan, analysis } = ctx;
  root.stripCtx = ctx; // the lanes' handlers read the latest (the store's cfg is replaced on every parse)
  if (!layout) {
    clear(root);
    return;
  }
  const n = layout.num_layers + layout.mtp_num_layers;
  const cols = columns(cfg).filter((c) => !c.empty);
  const shape = `${n}|${cols.map((c) => c.id).join('\u0001')}`;
  if (root.dataset.shape !== shape) {
    root.dataset.shape = shape;
    clear(root);
    root.append(el('p', { class: 'strip-help', id: 'strip-help', text: 'Drag along a lane to add layers to it (from a named layer: to remove them); or focus a lane, move with the arrows, widen with Shift+arrows, press Space.' }));
    const current = () => root.stripCtx;
    for (const c of cols) root.append(lane(c, n, current));
    root.append(el('div', { class: 'strip-status vh', id: 'strip-status', 'aria-live': 'polite' }));
  }
  for (const row of root.querySelectorAll('.strip-lane')) {
    const c = cols.find((x) => x.id === row.dataset.col);
    row.laneCol = c;
    const cells = row.querySelector('.strip-cells').children;
    for (let l = 0; l < n; l += 1) {
      const flags = (analysis && analysis.byLayer.get(l)) || [];
      const v = cellOf(c, ctx, l, layout.layer_types[l], plan ? plan[l] : null, flags);
      const cls = `sc ${v.cls.replace(/^cell ?/, '')}${l >= layout.num_layers ? ' mtp' : ''}`;
      if (cells[l].className !== cls) cells[l].className = cls;
    }
    paintCursor(row);
  }
}

function lane(c, n, current) {
  const editable = !!laneList(current().cfg, c);
  const cells = el('div', { class: 'strip-cells', 'aria-hidden': 'true' });
  cells.style.gridTemplateColumns = `repeat(${n}, minmax(0, 1fr))`;
  for (let l = 0; l < n; l += 1) cells.append(el('span', { class: 'sc', dataset: { layer: l } }));
  const row = el('div', {
    class: `strip-lane${editable ? '' : ' readonly'}`, dataset: { col: c.id },
  }, el('span', { class: 'strip-name', title: c.title, text: c.head || c.title }), cells);
  row.cursor = 0;
  row.anchor = null;
  if (!editable) return row;
  const slider = el('div', {
    class: 'strip-focus', role: 'slider', tabindex: 0, 'aria-label': `${c.title}: paint layers`,
    'aria-valuemin': 0, 'aria-valuemax': n - 1, 'aria-valuenow': 0, 'aria-describedby': 'strip-help',
    dataset: { key: `strip/${c.id}` },
  });
  row.append(slider);
  slider.addEventListener('keydown', (e) => keyPaint(e, row, n, current()));
  cells.addEventListener('pointerdown', (e) => pointerPaint(e, row, cells, n, current));
  cells.style.touchAction = 'none';
  return row;
}

function layerAt(cells, n, clientX) {
  const r = cells.getBoundingClientRect();
  return Math.max(0, Math.min(n - 1, Math.floor(((clientX - r.left) / Math.max(1, r.width)) * n)));
}

function apply(row, a, b, ctx) {
  const c = row.laneCol || null;
  const l = c && laneList(ctx.cfg, c);
  if (!l) return;
  const lo = Math.min(a, b);
  const hi = Math.max(a, b);
  const erase = named(l.get(), a);
  l.set(erase ? removeLayers(l.get(), lo, hi) : addLayers(l.get(), lo, hi));
  const text = `${erase ? 'Removed' : 'Added'} layers ${rangesText([[lo, hi]])} ${erase ? 'from' : 'to'} ${c.title}`;
  const status = document.getElementById('strip-status');
  if (status) status.textContent = text;
  ctx.paint(c.title, `strip/${c.id}`);
}

function pointerPaint(e, row, cells, n, current) {
  e.preventDefault();
  row.querySelector('.strip-focus').focus();
  const from = layerAt(cells, n, e.clientX);
  row.cursor = from;
  row.anchor = null;
  let to = from;
  cells.setPointerCapture(e.pointerId);
  const mark = () => {
    for (const s of cells.children) {
      const l = Number(s.dataset.layer);
      s.classList.toggle('sel', l >= Math.min(from, to) && l <= Math.max(from, to));
    }
  };
  mark();
  const move = (ev) => { to = layerAt(cells, n, ev.clientX); row.cursor = to; mark(); };
  const up = () => {
    cells.removeEventListener('pointermove', move);
    cells.removeEventListener('pointerup', up);
    cells.removeEventListener('pointercancel', cancel);
    for (const s of cells.children) s.classList.remove('sel');
    apply(row, from, to, current());
  };
  const cancel = () => {
    cells.removeEventListener('pointermove', move);
    cells.removeEventListener('pointerup', up);
    cells.removeEventListener('pointercancel', cancel);
    for (const s of cells.children) s.classList.remove('sel');
  };
  cells.addEventListener('pointermove', move);
  cells.addEventListener('pointerup', up);
  cells.addEventListener('pointercancel', cancel);
}

function keyPaint(e, row, n, ctx) {
  const step = { ArrowLeft: -1, ArrowDown: -1, ArrowRight: 1, ArrowUp: 1, PageDown: -10, PageUp: 10, Home: -Infinity, End: Infinity }[e.key];
  if (step !== undefined) {
    e.preventDefault();
    if (e.shiftKey && row.anchor === null) row.anchor = row.cursor;
    if (!e.shiftKey) row.anchor = null;
    row.cursor = Math.max(0, Math.min(n - 1, row.cursor + step));
    paintCursor(row);
    return;
  }
  if (e.key === ' ' || e.key === 'Enter') {
    e.preventDefault();
    const a = row.anchor === null ? row.cursor : row.anchor;
    apply(row, a, row.cursor, ctx);
    row.anchor = null;
  }
  if (e.key === 'Escape') {
    row.anchor = null;
    paintCursor(row);
  }
}

function paintCursor(row) {
  const slider = row.querySelector('.strip-focus');
  if (!slider) return;
  const cells = row.querySelector('.strip-cells').children;
  const lo = row.anchor === null ? row.cursor : Math.min(row.anchor, row.cursor);
  const hi = row.anchor === null ? row.cursor : Math.max(row.anchor, row.cursor);
  for (const s of cells) {
    const l = Number(s.dataset.layer);
    s.classList.toggle('cur', l === row.cursor);
    s.classList.toggle('sel', row.anchor !== null && l >= lo && l <= hi);
  }
  const state = cells[row.cursor] ? cells[row.cursor].className : '';
  const what = /a-recompute_comm/.test(state) ? 'comm recompute' : /a-recompute/.test(state) ? 'recomputed'
    : /a-swap/.test(state) ? 'swapped' : /a-keep/.test(state) ? 'kept' : /muted/.test(state) ? 'named, no effect' : 'not named';
  slider.setAttribute('aria-valuenow', row.cursor);
  slider.setAttribute('aria-valuetext', `layer ${row.cursor}: ${what}${/flag-error/.test(state) ? ', conflict' : ''}${row.anchor !== null ? `; selected layers ${lo}-${hi}` : ''}`);
}
