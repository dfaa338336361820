// The plan editor: recompute (mode, full_recompute_layer, select_module,
// exclude_op), recompute_comm, swap (layer_swap, op_swap); every layer
// list is a set of ranges, each a two-thumb slider with number inputs.
import { el, clear, uid } from './util.js';
import { RangeSlider } from './slider.js';
import { targetKey, touches, where } from './diags.js';

// ctx: {state, layout(), analysis(), change(how), rebuild()}
//   change('input'): values moved (debounced refresh)
//   change('commit'): a value settled
//   rebuild(): the structure changed (controls are rebuilt, focus kept)

function totalLayers(layout) {
  return layout ? layout.num_layers + layout.mtp_num_layers : 1;
}

function layerText(layout, v) {
  if (layout && v >= layout.num_layers) return `layer ${v} (MTP ${v - layout.num_layers})`;
  return `layer ${v}`;
}

// Every range the config names outside exclude_op (where a new range
// would collide: the same list, or another mechanism on the same layer).
function usedRanges(cfg) {
  const r = cfg.recompute;
  return [r.full, ...r.select.map((e) => e.ranges), ...cfg.comm.select.map((e) => e.ranges),
    ...cfg.swap.layerSwap.map((e) => e.ranges), ...cfg.swap.opSwap.map((e) => e.ranges)].flat();
}

// The first `len` layers no range names yet (or the last layers when
// every layer is named: the finding then says why).
export function freeRange(cfg, len, max) {
  const used = usedRanges(cfg);
  const taken = (l) => used.some(([a, b]) => l >= a && l <= b);
  for (let lo = 0; lo + len - 1 <= max; lo += 1) {
    let ok = true;
    for (let l = lo; l < lo + len; l += 1) if (taken(l)) { ok = false; break; }
    if (ok) return [lo, lo + len - 1];
  }
  return [Math.max(0, max - len + 1), max];
}

// A new exclude_op entry belongs where layers are recomputed.
function excludeRange(cfg, max) {
  const r = cfg.recompute;
  const first = r.full[0] || (r.select[0] && r.select[0].ranges[0]);
  return first ? [first[0], Math.min(first[1], first[0] + 1)] : [0, Math.min(1, max)];
}

// The key of the thumb to focus on a new range: one that can move.
function movableThumb(key, range, max) {
  return range[1] < max ? `${key}/hi` : `${key}/lo`;
}

function rangeList(ctx, ranges, opts) {
  // opts: {key, label, target}
  const layout = ctx.layout();
  const max = totalLayers(layout) - 1;
  const box = el('div', { class: 'rangelist', role: 'group', 'aria-label': opts.label });
  ranges.forEach((r, i) => {
    const label = `${opts.label}, range ${i + 1}`;
    const lo = el('input', {
      type: 'number', min: 0, max, step: 1, value: r[0], class: 'num',
      id: uid('n'), dataset: { key: `${opts.key}/${i}/from` },
    });
    const hi = el('input', {
      type: 'number', min: 0, max, step: 1, value: r[1], class: 'num',
      id: uid('n'), dataset: { key: `${opts.key}/${i}/to` },
    });
    const split = el('button', {
      type: 'button', class: 'small', text: 'Split', dataset: { key: `${opts.key}/${i}/split` },
      'aria-label': `Split ${label}`, disabled: r[1] <= r[0],
      on: {
        click: () => {
          const mid = Math.floor((r[0] + r[1]) / 2);
          ranges.splice(i, 1, [r[0], mid], [mid + 1, r[1]]);
          ctx.rebuild(movableThumb(`${opts.key}/${i + 1}`, [mid + 1, r[1]], max));
        },
      },
    });
    const slider = new RangeSlider({
      min: 0, max, lo: r[0], hi: r[1], label, key: `${opts.key}/${i}`,
      valueText: (v) => layerText(layout, v),
      onInput: (a, b) => {
        r[0] = a; r[1] = b;
        lo.value = a; hi.value = b;
        split.disabled = b <= a;
        ctx.change('input', opts.key);
      },
      onChange: () => ctx.change('commit', opts.key),
    });
    const fromNumbers = () => {
      let a = Number.parseInt(lo.value, 10);
      let b = Number.parseInt(hi.value, 10);
      if (!Number.isInteger(a) || !Number.isInteger(b) || a < 0 || b < 0) return;
      if (a > b) [a, b] = [b, a];
      r[0] = a; r[1] = b;
      slider.max = Math.max(max, b);
      slider.set(a, b, false);
      split.disabled = b <= a;
      ctx.change('commit', opts.key);
    };
    lo.addEventListener('change', fromNumbers);
    hi.addEventListener('change', fromNumbers);
    const del = el('button', {
      type: 'button', class: 'small', text: 'Delete', dataset: { key: `${opts.key}/${i}/del` },
      'aria-label': `Delete ${label}`,
      on: {
        click: () => {
          ranges.splice(i, 1);
          ctx.rebuild(ranges.length ? `${opts.key}/${Math.max(0, i - 1)}/lo` : `${opts.key}/add`);
        },
      },
    });
    box.append(el('div', { class: 'range-row', dataset: { target: opts.target, item: i, lo: r[0], hi: r[1] } },
      slider.root,
      el('div', { class: 'range-nums' },
        el('label', { for: lo.id, text: 'from' }), lo,
        el('label', { for: hi.id, text: 'to' }), hi,
        split, del),
      el('div', { class: 'range-flags', 'aria-live': 'polite' })));
    // keep the row's data in step for the flags pass
    const row = box.lastChild;
    const sync = () => { row.dataset.lo = r[0]; row.dataset.hi = r[1]; };
    slider.o.onInput = ((f) => (a, b) => { f(a, b); sync(); })(slider.o.onInput);
    lo.addEventListener('change', sync);
    hi.addEventListener('change', sync);
  });
  box.append(el('button', {
    type: 'button', class: 'small add', text: 'Add range', dataset: { key: `${opts.key}/add` },
    'aria-label': `Add range to ${opts.label}`,
    on: {
      click: () => {
        const nr = opts.target === 'exclude' || String(opts.target).startsWith('exclude:')
          ? excludeRange(ctx.state.cfg, max) : freeRange(ctx.state.cfg, 1, max);
        ranges.push(nr);
        ctx.rebuild(movableThumb(`${opts.key}/${ranges.length - 1}`, nr, max));
      },
    },
  }));
  return box;
}

function patternEntry(ctx, entry, opts) {
  // opts: {key, label, target, section, pkey, onDelete}
  const id = uid('pat');
  const input = el('input', {
    type: 'text', id, value: entry.pattern, class: 'pattern', spellcheck: 'false',
    autocomplete: 'off', dataset: { key: `${opts.key}/pattern` },
  });
  const preview = el('div', {
    class: 'preview', id: uid('pv'), dataset: { section: opts.section, pkey: opts.pkey, index: opts.index },
    'aria-live': 'polite',
  });
  input.setAttribute('aria-describedby', preview.id);
  const box = el('div', { class: 'entry', dataset: { target: opts.target, entryKey: opts.key } },
    el('div', { class: 'entry-head' },
      el('label', { for: id, text: opts.label }),
      input,
      el('button', {
        type: 'button', class: 'small', text: 'Delete', 'aria-label': `Delete ${opts.label} ${entry.pattern}`,
        dataset: { key: `${opts.key}/delete` }, on: { click: opts.onDelete },
      })),
    preview,
    el('div', { class: 'entry-flags' }),
    rangeList(ctx, entry.ranges, { key: `${opts.key}/r`, label: `${opts.label} '${entry.pattern}'`, target: opts.target }));
  input.addEventListener('input', () => {
    entry.pattern = input.value;
    box.dataset.target = opts.retarget(input.value);
    ctx.change('pattern', opts.key);
  });
  return box;
}

function patternList(ctx, entries, opts) {
  // opts: {key, label, t, section, pkey, examples, list}
  const box = el('div', {
    class: 'patterns', role: 'group', 'aria-label': opts.listLabel, dataset: { target: `list:${opts.t}` },
  }, el('div', { class: 'entry-flags' }));
  entries.forEach((e, i) => {
    const tkey = (p) => (opts.t === 'opSwap' ? `opSwap:${i}` : `${opts.t}:${p}`);
    box.append(patternEntry(ctx, e, {
      key: `${opts.key}/${i}`, label: opts.label, target: tkey(e.pattern), retarget: tkey,
      section: opts.section, pkey: opts.pkey, index: i,
      onDelete: () => { entries.splice(i, 1); ctx.rebuild(`${opts.key}/add`); },
    }));
  });
  box.append(el('button', {
    type: 'button', class: 'small add', text: `Add ${opts.label}`, dataset: { key: `${opts.key}/add` },
    on: {
      click: () => {
        const max = totalLayers(ctx.layout()) - 1;
        const cfg = ctx.state.cfg;
        const nr = opts.t === 'exclude' ? excludeRange(cfg, max) : freeRange(cfg, Math.min(2, max + 1), max);
        // a pattern no entry has yet (select_module keys must differ)
        const used = new Set(entries.map((e) => e.pattern));
        let pattern = opts.examples.find((p) => !used.has(p));
        for (let n = 2; !pattern; n += 1) if (!used.has(`${opts.examples[0]}${n}`)) pattern = `${opts.examples[0]}${n}`;
        entries.push({ pattern, ranges: [nr] });
        ctx.rebuild(`${opts.key}/${entries.length - 1}/pattern`);
      },
    },
  }));
  return box;
}

function checkbox(label, checked, key, on, target) {
  const id = uid('cb');
  return el('div', { class: 'check', dataset: target ? { target } : {} },
    el('input', { type: 'checkbox', id, checked, dataset: { key }, on: { change: (e) => on(e.target.checked) } }),
    el('label', { for: id, text: label }),
    el('div', { class: 'entry-flags' }));
}

export function renderPlan(root, ctx) {
  const cfg = ctx.state.cfg;
  const r = cfg.recompute;
  clear(root);
  if (ctx.state.cfgProblems.length) {
    root.append(el('p', { class: 'note warn-note', role: 'note' },
      'The YAML has values the controls cannot show (edit them in the YAML): ',
      ctx.state.cfgProblems.join('; ')));
  }
  // recompute
  const mode = el('fieldset', { class: 'modes', dataset: { target: 'mode' } }, el('legend', { text: 'Recompute mode' }));
  const modeFlags = el('div', { class: 'entry-flags' });
  for (const m of ['None', 'full', 'select']) {
    const id = uid('mode');
    mode.append(el('span', { class: 'radio' },
      el('input', {
        type: 'radio', name: 'mode', id, value: m, checked: r.mode === m, dataset: { key: `mode/${m}` },
        on: { change: () => { r.mode = m; ctx.rebuild(`mode/${m}`); } },
      }),
      el('label', { for: id, text: m })));
  }
  mode.append(modeFlags);
  root.append(el('section', { class: 'sec', 'aria-labelledby': 'sec-rc', dataset: { target: 'section:recompute' } },
    el('h3', { id: 'sec-rc', text: 'recompute' }),
    el('div', { class: 'entry-flags' }),
    mode,
    el('h4', { text: 'full_recompute_layer (whole layers)' }),
    el('div', { class: 'entry', dataset: { target: 'full', entryKey: 'full' } },
      el('div', { class: 'entry-flags' }),
      rangeList(ctx, r.full, { key: 'full', label: 'full_recompute_layer', target: 'full' })),
    el('h4', { text: 'select_module (modules recomputed)' }),
    patternList(ctx, r.select, { key: 'sel', label: 'select_module pattern', listLabel: 'select_module', t: 'select', section: 'recompute', pkey: 'select_module', examples: ['.*mlp', '.*self_attention', '.*core_attention', '.*input_layernorm'] }),
    el('h4', { text: 'exclude_op (kept inside recomputed regions)' }),
    patternList(ctx, r.exclude, { key: 'exc', label: 'exclude_op pattern', listLabel: 'exclude_op', t: 'exclude', section: 'recompute', pkey: 'exclude_op', examples: ['.*activation_func', '.*linear_proj', '.*linear_qkv'] })));
  // recompute_comm
  const c = cfg.comm;
  root.append(el('section', { class: 'sec', 'aria-labelledby': 'sec-cm', dataset: { target: 'section:recompute_comm' } },
    el('h3', { id: 'sec-cm', text: 'recompute_comm' }),
    el('div', { class: 'entry-flags' }),
    checkbox('enable communication recompute', c.enable, 'comm/enable', (v) => { c.enable = v; ctx.rebuild('comm/enable'); }, 'commEnable'),
    patternList(ctx, c.select, { key: 'cm', label: 'recompute_comm pattern', listLabel: 'recompute_comm select_module', t: 'comm', section: 'recompute_comm', pkey: 'select_module', examples: ['.*allgather', '.*reducescatter', '.*alltoall'] })));
  // swap
  const s = cfg.swap;
  const pfId = uid('pf');
  const prefetch = el('input', {
    type: 'number', id: pfId, min: 1, step: 1, value: s.prefetch, class: 'num', dataset: { key: 'swap/prefetch' },
    on: {
      change: (e) => {
        const v = Number.parseInt(e.target.value, 10);
        if (Number.isInteger(v)) { s.prefetch = v; ctx.change('commit', 'swap/prefetch'); }
      },
    },
  });
  const groups = el('div', {
    class: 'patterns', role: 'group', 'aria-label': 'layer_swap', dataset: { target: 'list:layerSwap' },
  }, el('div', { class: 'entry-flags' }));
  s.layerSwap.forEach((g, i) => {
    groups.append(el('div', {
      class: 'entry', role: 'group', 'aria-label': `layer_swap[${i}]`, dataset: { target: `layerSwap:${i}`, entryKey: `ls/${i}` },
    },
      el('div', { class: 'entry-head' },
        el('span', { class: 'entry-title', text: `layer_swap[${i}]` }),
        el('button', {
          type: 'button', class: 'small', text: 'Delete', 'aria-label': `Delete layer_swap entry ${i}`,
          dataset: { key: `ls/${i}/delete` },
          on: { click: () => { s.layerSwap.splice(i, 1); ctx.rebuild('ls/add'); } },
        })),
      el('div', { class: 'entry-flags' }),
      rangeList(ctx, g.ranges, { key: `ls/${i}/r`, label: `layer_swap[${i}]`, target: `layerSwap:${i}` })));
  });
  groups.append(el('button', {
    type: 'button', class: 'small add', text: 'Add layer_swap entry', dataset: { key: 'ls/add' },
    on: {
      click: () => {
        const max = totalLayers(ctx.layout()) - 1;
        const nr = freeRange(cfg, 1, max);
        s.layerSwap.push({ ranges: [nr] });
        ctx.rebuild(movableThumb(`ls/${s.layerSwap.length - 1}/r/0`, nr, max));
      },
    },
  }));
  root.append(el('section', { class: 'sec', 'aria-labelledby': 'sec-sw', dataset: { target: 'section:swap' } },
    el('h3', { id: 'sec-sw', text: 'swap' }),
    el('div', { class: 'entry-flags' }),
    checkbox('enable swap to host memory', s.enable, 'swap/enable', (v) => { s.enable = v; ctx.rebuild('swap/enable'); }, 'swapEnable'),
    el('div', { class: 'field inline', dataset: { target: 'prefetch' } },
      el('label', { for: pfId, text: 'default_prefetch' }), prefetch, el('div', { class: 'entry-flags' })),
    el('h4', { text: 'layer_swap (whole layers)' }),
    groups,
    el('h4', { text: 'op_swap (modules or ops)' }),
    patternList(ctx, s.opSwap, { key: 'os', label: 'op_swap op_name', listLabel: 'op_swap', t: 'opSwap', section: 'swap', pkey: 'op_swap', examples: ['.*linear_fc1', '.*linear_fc2', '.*linear_proj'] })));
}

// ---- flags and previews, updated in place after each answer -------------------

// The controls a holder owns (not those of a holder inside it): a range
// row's thumbs and numbers, a field's input, the radios of the mode, an
// entry's list of ranges (its pattern input is marked for findings about
// the pattern only); a holder without any (a section, a list) is marked
// itself.
function ownControls(holder) {
  const own = [...holder.querySelectorAll('input:not(.pattern), select, [role="slider"], .rangelist')]
    .filter((n) => n.closest('[data-target]') === holder);
  return own.length ? own : [holder];
}

const sevOf = (entries) => (entries.some((e) => e.severity === 'error') ? 'error' : 'warning');

// Marks a holder: its class (the visible frame and sign), its message
// box, and on its controls aria-invalid (errors) and aria-describedby
// (the messages, errors and warnings).
function markHolder(holder, box, sev, entries, only) {
  holder.classList.add(`flag-${sev}`);
  if (!box.id) box.id = uid('flags');
  for (const e of entries) box.append(flagLine(e));
  for (const n of only || ownControls(holder)) {
    if (sev === 'error') n.setAttribute('aria-invalid', 'true');
    const ids = (n.getAttribute('aria-describedby') || '').split(/\s+/).filter(Boolean);
    if (!ids.includes(box.id)) n.setAttribute('aria-describedby', [...ids, box.id].join(' '));
    n.dataset.flagged = '1';
  }
}

export function paintFlags(root, analysis) {
  for (const n of root.querySelectorAll('.flag-error, .flag-warning')) n.classList.remove('flag-error', 'flag-warning');
  for (const n of root.querySelectorAll('.range-flags, .entry-flags')) clear(n);
  for (const n of root.querySelectorAll('[data-flagged]')) {
    n.removeAttribute('aria-invalid');
    delete n.dataset.flagged;
  }
  if (!analysis) return;
  const seen = new Set();
  for (const holder of root.querySelectorAll('[data-target]')) {
    const hits = analysis.byTarget.get(holder.dataset.target) || [];
    if (!hits.length) continue;
    if (holder.classList.contains('range-row')) {
      const lo = Number(holder.dataset.lo);
      const hi = Number(holder.dataset.hi);
      const i = Number(holder.dataset.item);
      const mine = hits.filter((h) => !h.e.pattern && touches(h, lo, hi, i));
      if (!mine.length) continue;
      const sev = mine.some((h) => h.e.severity === 'error') ? 'error' : 'warning';
      markHolder(holder, holder.querySelector('.range-flags'), sev, mine.map((h) => h.e));
      continue;
    }
    // an entry, a fieldset, a list or a section: what is not shown on a range
    const box = holder.querySelector(':scope > .entry-flags');
    const rows = [...holder.querySelectorAll('.range-row')].filter((row) => row.dataset.target === holder.dataset.target);
    const mine = [];
    for (const h of hits) {
      const onRange = !h.e.pattern && rows.some((row) => touches(h, Number(row.dataset.lo), Number(row.dataset.hi), Number(row.dataset.item)));
      const k = `${holder.dataset.target}|${h.e.d.message}`;
      if (onRange || seen.has(k)) continue;
      seen.add(k);
      mine.push(h.e);
    }
    if (!mine.length) continue;
    const pattern = holder.querySelector('input.pattern');
    const own = pattern && pattern.closest('[data-target]') === holder ? pattern : null;
    const aboutPattern = own ? mine.filter((e) => e.pattern) : [];
    const others = mine.filter((e) => !aboutPattern.includes(e));
    if (aboutPattern.length) markHolder(holder, box || holder, sevOf(aboutPattern), aboutPattern, [own]);
    if (others.length) markHolder(holder, box || holder, sevOf(others), others, null);
  }
}

function flagLine(e) {
  const d = e.d;
  return el('p', { class: `flag ${e.severity}` },
    el('span', { class: 'sev', text: e.severity === 'error' ? '⚠ error' : '! warning' }),
    ` ${d.message} `,
    el('span', { class: 'where', text: `(${where(d)})` }));
}

export function paintPreviews(root, layout, analysis) {
  for (const pv of root.querySelectorAll('.preview')) {
    clear(pv);
    if (!layout || !layout.patterns) continue;
    const { section, pkey } = pv.dataset;
    const index = Number(pv.dataset.index);
    const mine = layout.patterns.filter((p) => p.section === section && p.key === pkey);
    const p = mine[index];
    if (!p) continue;
    if (p.error) {
      pv.append(el('span', { class: 'pv-none', text: 'does not compile (see the finding)' }));
      continue;
    }
    const parts = [];
    let any = false;
    p.matches.forEach((paths, t) => {
      const type = layout.types[t];
      if (!layout.layer_types.includes(t)) return;
      if (paths.length) any = true;
      const shown = paths.slice(0, 6).join(', ') + (paths.length > 6 ? `, … (${paths.length} in all)` : '');
      parts.push(el('li', {},
        el('span', { class: 'pv-type', text: `${type.name}: ` }),
        paths.length ? el('code', { text: shown }) : el('span', { class: 'pv-none', text: 'no match' })));
    });
    pv.append(el('span', { class: 'pv-title', text: any ? 'Matches' : 'Matches nothing in this model' }),
      el('ul', {}, parts));
    if (!any && analysis) {
      const t = section === 'swap' ? `opSwap:${index}` : `${section === 'recompute_comm' ? 'comm' : pkey === 'exclude_op' ? 'exclude' : 'select'}:${p.pattern}`;
      const hint = (analysis.byTarget.get(t) || []).map((h) => h.e.d.hint).find((h) => h && /did you mean/.test(h));
      if (hint) pv.append(el('p', { class: 'pv-hint', text: hint }));
    }
  }
}

export { targetKey };
