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
    // one entry changes (its comments and the others stay): layers are
    // added to the entry nearest them, removed from each entry naming them
    return {
      get: () => s.layerSwap.flatMap((e) => e.ranges),
      add: (lo, hi) => {
        const e = nearestEntry(s.layerSwap, lo, hi);
        if (e) e.ranges = addLayers(e.ranges, lo, hi);
        else s.layerSwap.push({ ranges: [[lo, hi]] });
      },
      remove: (lo, hi) => {
        for (const e of s.layerSwap) e.ranges = removeLayers(e.ranges, lo, hi);
        s.layerSwap = s.layerSwap.filter((e) => e.ranges.length);
      },
    };
  }
  return null; // op_swap, exclude_op, empty lanes: patterns are edited in the controls
}

// The entry whose layers come closest to lo..hi (the first of equals).
export function nearestEntry(entries, lo, hi) {
  let best = null;
  let bestGap = Infinity;
  for (const e of entries) {
    for (const [a, b] of e.ranges) {
      const gap = b < lo ? lo - b : a > hi ? a - hi : 0;
      if (gap < bestGap) {
        bestGap = gap;
        best = e;
      }
    }
  }
  return best;
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
  // every mechanism has its lane: select_module and recompute_comm without
  // a pattern too (read-only, saying where a pattern is added)
  const cols = columns(cfg);
  const shape = `${n}|${cols.map((c) => c.id).join('\u0001')}${ctx.proposal ? '|proposal' : ''}`;
  if (root.dataset.shape !== shape) {
    root.dataset.shape = shape;
    clear(root);
    root.append(el('p', { class: 'strip-help', id: 'strip-help', text: 'Drag along a lane to add layers to it (from a named layer: to remove them); or focus a lane, move with the arrows, widen with Shift+arrows, press Space.' }));
    root.view = { first: 0, count: n, n };
    root.append(zoomBar(root));
    const current = () => root.stripCtx;
    for (const c of cols) root.append(lane(c, n, current, root));
    if (ctx.proposal) root.append(proposalLane(n));
    root.append(el('div', { class: 'strip-tip', 'aria-hidden': 'true', hidden: true }));
    root.append(el('div', { class: 'strip-status vh', id: 'strip-status', 'aria-live': 'polite' }));
  }
  paintProposal(root, ctx, n);
  for (const row of root.querySelectorAll('.strip-lane:not(.proposal)')) {
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
  showView(root);
}

// ---- the planner's proposal, drawn under the lanes -------------------------------------------

function proposalLane(n) {
  const cells = el('div', { class: 'strip-cells', 'aria-hidden': 'true' });
  for (let l = 0; l < n; l += 1) cells.append(el('span', { class: 'sc', dataset: { layer: l } }));
  return el('div', { class: 'strip-lane readonly proposal', dataset: { col: 'proposal' } },
    el('span', { class: 'strip-name', title: 'The planner\'s proposal: what it does on each layer', text: 'proposal' }), cells,
    el('span', { class: 'vh proposal-text' }));
}

function within(ranges, l) {
  return ranges.some(([a, b]) => l >= a && l <= b);
}

// What a config does to layer l, as the lanes colour it: recompute (whole
// or selected), swap, or nothing.
export function layerAction(cfg, l) {
  const r = cfg.recompute;
  if (r.mode !== 'None' && (within(r.full, l) || (r.mode === 'select' && r.select.some((e) => within(e.ranges, l))))) return 'recompute';
  if (cfg.swap.enable && (cfg.swap.layerSwap.some((e) => within(e.ranges, l)) || cfg.swap.opSwap.some((e) => within(e.ranges, l)))) return 'swap';
  if (cfg.comm.enable && cfg.comm.select.some((e) => within(e.ranges, l))) return 'recompute_comm';
  return null;
}

function paintProposal(root, ctx, n) {
  const row = root.querySelector('.strip-lane.proposal');
  if (!row || !ctx.proposal) return;
  const cells = row.querySelector('.strip-cells').children;
  const by = { recompute: [], swap: [], recompute_comm: [] };
  for (let l = 0; l < n; l += 1) {
    const a = layerAction(ctx.proposal, l);
    const changed = a !== layerAction(ctx.cfg, l);
    cells[l].className = `sc${a ? ` a-${a}` : ''}${changed ? ' changed' : ''}`;
    cells[l].title = `layer ${l}: ${a || 'kept'}${changed ? ' (a change)' : ''}`;
    if (a) by[a].push(l);
  }
  const ranges = (ls) => rangesText(ls.reduce((acc, l) => {
    const last = acc[acc.length - 1];
    if (last && l === last[1] + 1) last[1] = l;
    else acc.push([l, l]);
    return acc;
  }, []));
  row.querySelector('.proposal-text').textContent = `The proposal: ${Object.entries(by).filter(([, ls]) => ls.length).map(([a, ls]) => `${a} on layers ${ranges(ls)}`).join('; ') || 'nothing on any layer'}.`;
}

// ---- the zoom: a window of the layers, every lane alike ----------------------------------

const MIN_WINDOW = 8;

function zoomBar(root) {
  const btn = (key, label, text, fn) => el('button', {
    type: 'button', class: 'zoom-btn', dataset: { key }, 'aria-label': label, title: label, text,
    on: { click: () => { fn(root.view); showView(root); } },
  });
  return el('div', { class: 'strip-zoom', role: 'group', 'aria-label': 'Zoom the layer strip' },
    btn('strip/zoom-out', 'Zoom out (more layers)', '−', (v) => zoomTo(v, v.count * 2, v.first + v.count / 2)),
    btn('strip/zoom-in', 'Zoom in (fewer, wider layers)', '+', (v) => zoomTo(v, Math.ceil(v.count / 2), v.first + v.count / 2)),
    btn('strip/left', 'Earlier layers', '◀', (v) => panTo(v, v.first - Math.max(1, Math.floor(v.count / 2)))),
    btn('strip/right', 'Later layers', '▶', (v) => panTo(v, v.first + Math.max(1, Math.floor(v.count / 2)))),
    el('span', { class: 'strip-window', 'aria-live': 'polite' }));
}

function panTo(v, first) {
  v.first = Math.max(0, Math.min(v.n - v.count, Math.round(first)));
}

// count layers in view around the centre layer
function zoomTo(v, count, centre) {
  v.count = Math.max(Math.min(MIN_WINDOW, v.n), Math.min(v.n, count));
  panTo(v, centre - v.count / 2);
}

// Keeps layer l in view (a keyboard cursor that walks out of the window).
function follow(root, l) {
  const v = root.view;
  if (!v || (l >= v.first && l < v.first + v.count)) return;
  panTo(v, l < v.first ? l : l - v.count + 1);
  showView(root);
}

function showView(root) {
  const v = root.view;
  if (!v) return;
  const last = v.first + v.count - 1;
  for (const cells of root.querySelectorAll('.strip-cells')) {
    cells.style.gridTemplateColumns = `repeat(${v.count}, minmax(0, 1fr))`;
    const all = cells.children;
    for (let l = 0; l < all.length; l += 1) {
      const hide = l < v.first || l > last;
      if (all[l].hidden !== hide) all[l].hidden = hide;
    }
  }
  const label = root.querySelector('.strip-window');
  if (label) label.textContent = v.count === v.n ? `all ${v.n} layers` : `layers ${v.first}–${last} of ${v.n}`;
  const set = (key, off) => { const b = root.querySelector(`[data-key="${key}"]`); if (b) b.disabled = off; };
  set('strip/zoom-in', v.count <= Math.min(MIN_WINDOW, v.n));
  set('strip/zoom-out', v.count === v.n);
  set('strip/left', v.first === 0);
  set('strip/right', last >= v.n - 1);
}

// The layer number under the pointer (a range while dragging), above it.
function tip(root, cells, clientX, text) {
  const t = root.querySelector('.strip-tip');
  if (!t) return;
  if (text === null) {
    t.hidden = true;
    return;
  }
  const box = root.getBoundingClientRect();
  const c = cells.getBoundingClientRect();
  t.textContent = text;
  t.hidden = false;
  t.style.left = `${Math.max(0, Math.min(box.width - t.offsetWidth, clientX - box.left - t.offsetWidth / 2))}px`;
  t.style.top = `${c.top - box.top - t.offsetHeight - 2}px`;
}

function lane(c, n, current, root) {
  const editable = !!laneList(current().cfg, c);
  const cells = el('div', { class: 'strip-cells', 'aria-hidden': 'true' });
  cells.style.gridTemplateColumns = `repeat(${n}, minmax(0, 1fr))`;
  for (let l = 0; l < n; l += 1) cells.append(el('span', { class: 'sc', dataset: { layer: l } }));
  const none = c.empty ? `${c.title}: no pattern yet; add one with the plan's ${c.title} controls, then paint its lane` : null;
  const row = el('div', {
    class: `strip-lane${editable ? '' : ' readonly'}${c.empty ? ' empty' : ''}`, dataset: { col: c.id }, title: none,
  }, el('span', { class: 'strip-name', title: none || c.title, text: c.head || c.title }), cells,
  none ? el('span', { class: 'vh', text: none }) : null);
  row.cursor = 0;
  row.anchor = null;
  if (!editable) return row;
  const slider = el('div', {
    class: 'strip-focus', role: 'slider', tabindex: 0, 'aria-label': `${c.title}: paint layers`,
    'aria-valuemin': 0, 'aria-valuemax': n - 1, 'aria-valuenow': 0, 'aria-describedby': 'strip-help',
    dataset: { key: `strip/${c.id}` },
  });
  row.append(slider);
  slider.addEventListener('keydown', (e) => { keyPaint(e, row, n, current()); follow(root, row.cursor); });
  cells.addEventListener('pointerdown', (e) => pointerPaint(e, row, cells, root, current));
  cells.addEventListener('pointermove', (e) => { if (!row.dragging) tip(root, cells, e.clientX, `layer ${layerAt(cells, root.view, e.clientX)}`); });
  cells.addEventListener('pointerleave', () => { if (!row.dragging) tip(root, cells, 0, null); });
  cells.style.touchAction = 'none';
  return row;
}

// The layer under clientX in the window of layers in view.
function layerAt(cells, v, clientX) {
  const r = cells.getBoundingClientRect();
  const i = Math.floor(((clientX - r.left) / Math.max(1, r.width)) * v.count);
  return v.first + Math.max(0, Math.min(v.count - 1, i));
}

function apply(row, a, b, ctx) {
  const c = row.laneCol || null;
  const l = c && laneList(ctx.cfg, c);
  if (!l) return;
  const lo = Math.min(a, b);
  const hi = Math.max(a, b);
  const erase = named(l.get(), a);
  if (l.add) (erase ? l.remove : l.add)(lo, hi);
  else l.set(erase ? removeLayers(l.get(), lo, hi) : addLayers(l.get(), lo, hi));
  const text = `${erase ? 'Removed' : 'Added'} layers ${rangesText([[lo, hi]])} ${erase ? 'from' : 'to'} ${c.title}`;
  const status = document.getElementById('strip-status');
  if (status) status.textContent = text;
  ctx.paint(c.title, `strip/${c.id}`);
}

function pointerPaint(e, row, cells, root, current) {
  e.preventDefault();
  row.querySelector('.strip-focus').focus();
  const v = root.view;
  const from = layerAt(cells, v, e.clientX);
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
  row.dragging = true;
  const say = (x) => tip(root, cells, x, from === to ? `layer ${from}` : `layers ${Math.min(from, to)}–${Math.max(from, to)}`);
  mark();
  say(e.clientX);
  const move = (ev) => { to = layerAt(cells, v, ev.clientX); row.cursor = to; mark(); say(ev.clientX); };
  const end = () => {
    row.dragging = false;
    tip(root, cells, 0, null);
  };
  const up = () => {
    end();
    cells.removeEventListener('pointermove', move);
    cells.removeEventListener('pointerup', up);
    cells.removeEventListener('pointercancel', cancel);
    for (const s of cells.children) s.classList.remove('sel');
    apply(row, from, to, current());
  };
  const cancel = () => {
    end();
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
