// Where each diagnostic belongs: the controls it names (a layer list, a
// pattern entry, one of its ranges) and the layers it is about, so that
// conflicts are flagged on the layer map's cells and on the ranges that
// cause them. The core's messages name layers as "layers 1, 4-7" (its one
// range-text helper) and the other rule of a conflict as its YAML path.
import { parseRangesText } from './util.js';

// A target is {t, key, item}: t one of full, select, exclude, comm,
// layerSwap, opSwap, mode, commEnable, swapEnable, prefetch.
function targetOfPath(path) {
  let m;
  if ((m = /^recompute\.full_recompute_layer(?:\[(\d+)\])?$/.exec(path))) return { t: 'full', item: m[1] };
  if ((m = /^recompute\.select_module\['(.*)'\](?:\[(\d+)\])?$/.exec(path))) return { t: 'select', key: m[1], item: m[2] };
  if ((m = /^recompute\.exclude_op\['(.*)'\](?:\[(\d+)\])?$/.exec(path))) return { t: 'exclude', key: m[1], item: m[2] };
  if ((m = /^recompute_comm\.select_module\['(.*)'\](?:\[(\d+)\])?$/.exec(path))) return { t: 'comm', key: m[1], item: m[2] };
  if ((m = /^swap\.layer_swap\[(\d+)\](?:\.layers(?:\[(\d+)\])?)?$/.exec(path))) return { t: 'layerSwap', key: m[1], item: m[2] };
  if ((m = /^swap\.op_swap\[(\d+)\](?:\.(?:op_name|layers(?:\[(\d+)\])?))?$/.exec(path))) return { t: 'opSwap', key: m[1], item: m[2] };
  if (/^recompute\.mode/.test(path)) return { t: 'mode' };
  if (/^recompute_comm\.enable/.test(path)) return { t: 'commEnable' };
  if (/^swap\.enable/.test(path)) return { t: 'swapEnable' };
  if (/^swap\.default_prefetch/.test(path)) return { t: 'prefetch' };
  return null;
}

// Other rules a conflict message names: "(recompute.select_module['.*mlp'], line 5)".
function targetsInMessage(d) {
  const out = [];
  const msg = d.message || '';
  let m;
  const re = /\((recompute(?:_comm)?\.[^,)]*?(?:\['.*?'\])?), line \d+\)/g;
  while ((m = re.exec(msg))) {
    const t = targetOfPath(m[1]);
    if (t) out.push({ ...t, item: undefined });
  }
  const ls = /\blayer_swap\[(\d+)\]/.exec(msg);
  if (ls && !/^swap\.layer_swap/.test(d.path || '')) out.push({ t: 'layerSwap', key: ls[1] });
  if (d.code === 'full-op-swap' || d.code === 'redundant') out.push({ t: 'full' });
  return out;
}

// The core names them in `layers` ("8-11, 14"); older answers only in the
// message text.
function layersOf(d) {
  if (d.layers) return new Set(parseRangesText(d.layers));
  // "'5-12' overlaps '0-10' before it": the layers the two ranges share
  const o = d.code === 'layer-order' && /'(\d+(?:-\d+)?)' overlaps '(\d+(?:-\d+)?)'/.exec(d.message || '');
  if (o) {
    const b = new Set(parseRangesText(o[2]));
    return new Set(parseRangesText(o[1]).filter((l) => b.has(l)));
  }
  const m = /\blayers? (\d+(?:-\d+)?(?:, \d+(?:-\d+)?)*)/.exec(d.message || '');
  return m ? new Set(parseRangesText(m[1])) : null;
}

export function targetKey(t) {
  return t.key === undefined ? t.t : `${t.t}:${t.key}`;
}

// The layer map's column of a target.
function columnOf(t) {
  if (t.t === 'select' || t.t === 'comm') return `${t.t}:${t.key}`;
  if (['full', 'exclude', 'layerSwap', 'opSwap'].includes(t.t)) return t.t;
  return null;
}

// {list: [{d, severity, targets, layers}], byTarget: Map(key -> [entry]),
//  byLayer: Map(layer -> [{entry, columns}])}
// The parallel settings a finding is about: the model's own findings name
// them in their path; swap under pipeline parallelism is caused by PP.
const FIELD_OF_CODE = { 'swap-pipeline': 'pipeline_parallel' };
function modelFieldOf(d) {
  const m = /^parallel\.(\w+)/.exec(d.path || '');
  if (m && d.file === 'model') return m[1];
  return FIELD_OF_CODE[d.code] || null;
}

// Findings about the pattern itself (not its layers): marked on its input.
export const PATTERN_CODES = new Set(['regex']);

export function analyze(result) {
  const list = [];
  const modelHits = [];
  for (const [severity, arr] of [['error', result.errors || []], ['warning', result.warnings || []]]) {
    for (const d of arr) {
      const field = modelFieldOf(d);
      if (field) modelHits.push({ field, severity, d });
      if (d.file && d.file !== 'config') continue; // model findings are shown by the model panel
      const own = targetOfPath(d.path || '');
      const targets = [own, ...targetsInMessage(d)].filter(Boolean);
      list.push({ d, severity, targets, own, layers: layersOf(d) });
    }
  }
  const byTarget = new Map();
  const byLayer = new Map();
  for (const e of list) {
    for (const t of e.targets) {
      const k = targetKey(t);
      if (!byTarget.has(k)) byTarget.set(k, []);
      byTarget.get(k).push({ e, item: t.item === undefined ? null : Number(t.item) });
    }
    if (!e.layers) continue;
    const columns = new Set(e.targets.map(columnOf).filter(Boolean));
    for (const l of e.layers) {
      if (!byLayer.has(l)) byLayer.set(l, []);
      byLayer.get(l).push({ e, columns });
    }
  }
  return { list, byTarget, byLayer, modelHits };
}

// Does a diagnostic entry touch range [lo, hi] (item index i) of a target?
export function touches(hit, lo, hi, i) {
  if (hit.item !== null) return hit.item === i;
  if (!hit.e.layers) return true;
  for (let l = lo; l <= hi; l += 1) if (hit.e.layers.has(l)) return true;
  return false;
}

export function where(d) {
  return d.line ? `YAML line ${d.line}, column ${d.column}` : 'no position';
}
