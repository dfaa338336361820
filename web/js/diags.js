// Where each diagnostic belongs: the controls it names (a section, a
// layer list, a pattern entry, one of its ranges, a parallel field) and the
// layers it is about, so that conflicts are flagged on the layer map's
// cells, on the strip and on the controls that cause them; a diagnostic
// with nothing to point at carries the reason, which the findings list
// shows. The core's paths are `section.key['pattern'][item]`,
// `swap.layer_swap[i].layers[j]`, `parallel.key` (model file) or '' (YAML
// syntax, duplicate keys, the single-device rule); its messages name
// layers as "layers 1, 4-7" and the other rule of a conflict as its YAML
// path.
import { parseRangesText } from './util.js';

// A target is {t, key, item, itemText}: t one of full, select, exclude,
// comm, layerSwap, opSwap (a list or an entry of one), mode, commEnable,
// swapEnable, prefetch, section (key: the section), list (key: which
// pattern map or entry list, as a whole). item is the index of a range in
// its list; itemText the range as written ("30-35") when only that is known.
const SECTION_TARGET = { recompute: 'section', recompute_comm: 'section', swap: 'section' };

function targetOfPath(path) {
  let m;
  if ((m = /^recompute\.full_recompute_layer(?:\[(\d+)\])?$/.exec(path))) return { t: 'full', item: m[1] };
  if ((m = /^recompute\.select_module\['(.*)'\](?:\[(\d+)\])?$/.exec(path))) return { t: 'select', key: m[1], item: m[2] };
  if ((m = /^recompute\.exclude_op\['(.*)'\](?:\[(\d+)\])?$/.exec(path))) return { t: 'exclude', key: m[1], item: m[2] };
  if ((m = /^recompute_comm\.select_module\['(.*)'\](?:\[(\d+)\])?$/.exec(path))) return { t: 'comm', key: m[1], item: m[2] };
  if ((m = /^swap\.layer_swap\[(\d+)\](?:\.layers(?:\[(\d+)\])?)?$/.exec(path))) return { t: 'layerSwap', key: m[1], item: m[2] };
  if ((m = /^swap\.op_swap\[(\d+)\](?:\.(?:op_name|layers(?:\[(\d+)\])?))?$/.exec(path))) return { t: 'opSwap', key: m[1], item: m[2] };
  if (path === 'recompute.select_module') return { t: 'list', key: 'select' };
  if (path === 'recompute.exclude_op') return { t: 'list', key: 'exclude' };
  if (path === 'recompute_comm.select_module') return { t: 'list', key: 'comm' };
  if (path === 'swap.layer_swap') return { t: 'list', key: 'layerSwap' };
  if (path === 'swap.op_swap') return { t: 'list', key: 'opSwap' };
  if (/^recompute\.mode/.test(path)) return { t: 'mode' };
  if (/^recompute_comm\.enable/.test(path)) return { t: 'commEnable' };
  if (/^swap\.enable/.test(path)) return { t: 'swapEnable' };
  if (/^swap\.default_prefetch/.test(path)) return { t: 'prefetch' };
  if (SECTION_TARGET[path]) return { t: 'section', key: path };
  return null;
}

// The YAML path of a line of block-style text (its keys from the top),
// for findings the core reports by line only (a duplicate key).
export function pathAtLine(text, line) {
  const lines = String(text || '').split('\n');
  const stack = [];
  let found = null;
  for (let i = 0; i < line && i < lines.length; i += 1) {
    const m = /^(\s*)(?:-\s+)?('(?:[^']|'')*'|"(?:[^"\\]|\\.)*"|[^\s#'"][^#]*?)\s*:(?:\s|$)/.exec(lines[i]);
    if (!m) continue;
    const indent = m[1].length;
    let key = m[2];
    if (key.startsWith("'")) key = key.slice(1, -1).replace(/''/g, "'");
    else if (key.startsWith('"')) {
      try { key = JSON.parse(key); } catch { key = key.slice(1, -1); }
    }
    while (stack.length && stack[stack.length - 1].indent >= indent) stack.pop();
    stack.push({ indent, key });
    if (i === line - 1) found = stack.map((s) => s.key);
  }
  return found;
}

function pathOfKeys(keys) {
  if (!keys || !keys.length) return '';
  const [sec, key, pattern] = keys;
  if (keys.length === 1) return sec;
  if (keys.length === 2) return `${sec}.${key}`;
  if (key === 'select_module' || key === 'exclude_op') return `${sec}.${key}['${pattern}']`;
  return `${sec}.${key}`;
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
  // a list its section's switch leaves unused: the switch is the fix
  if (d.code === 'no-effect') {
    const sw = { recompute: 'mode', recompute_comm: 'commEnable', swap: 'swapEnable' }[(d.path || '').split('.')[0]];
    if (sw) out.push({ t: sw });
  }
  // a swapped layer too close to the end: default_prefetch is the other half
  if (d.code === 'prefetch-range' && /^swap\.layer_swap/.test(d.path || '')) out.push({ t: 'prefetch' });
  return out;
}

// The core names them in `layers` ("8-11, 14"); older answers only in the
// message text. A layer-range message names the model's layers, not the
// finding's ("(layers 0-31)").
function layersOf(d) {
  if (d.layers) return new Set(parseRangesText(d.layers));
  // "'5-12' overlaps '0-10' before it": the layers the two ranges share
  const o = d.code === 'layer-order' && /'(\d+(?:-\d+)?)' overlaps '(\d+(?:-\d+)?)'/.exec(d.message || '');
  if (o) {
    const b = new Set(parseRangesText(o[2]));
    return new Set(parseRangesText(o[1]).filter((l) => b.has(l)));
  }
  if (d.code === 'layer-range' || d.file === 'model') return null;
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

// The parallel and batch fields of the model panel (model.js's FIELDS),
// by their key in the model file.
export const MODEL_FIELDS = new Set(['world_size', 'tensor_parallel', 'pipeline_parallel', 'expert_parallel',
  'context_parallel', 'micro_batch_size', 'micro_batch_num', 'seq_length', 'sequence_parallel']);
const FIELD_KEY = { sequence_parallel: 'sp' };

// The model fields a finding is about: the model's own findings name them
// in their path; swap under pipeline parallelism is caused by PP, recompute
// on one device by the device count.
const FIELD_OF_CODE = { 'swap-pipeline': 'pipeline_parallel', 'single-device': 'world_size' };
function modelFieldOf(d) {
  const m = /^(?:parallel|model|training)\.(\w+)$/.exec(d.path || '');
  if (m && d.file === 'model' && MODEL_FIELDS.has(m[1])) return FIELD_KEY[m[1]] || m[1];
  return FIELD_OF_CODE[d.code] || null;
}

// Why a finding has no control to mark (shown beside it in the list).
function reasonOf(d) {
  if (d.code === 'yaml-syntax') return 'the text is not YAML, so no control can show it: fix it at the line marked in the YAML panel';
  if (d.code === 'legacy-key') {
    return d.path === 'recompute_config'
      ? 'recompute_config is not one of the sections the controls edit: see the offer to migrate it, or edit it in the YAML'
      : `${d.path || 'this key'} is not one of the three sections the controls edit: edit it in the YAML`;
  }
  if (d.code === 'model-needed') return 'it needs a model: pick a preset or upload a model file';
  if (d.code === 'internal') return 'an internal error of memopt: no setting causes it';
  if (d.code === 'duplicate-key') return 'the controls show one of the two keys only: remove the other in the YAML';
  if (d.file === 'model') return `about ${d.path ? `the model file's ${d.path}` : 'the model file'}, which this page has no field for: upload a corrected model file`;
  return `no control edits ${d.path ? d.path : 'what it names'}: see the YAML`;
}

// Findings about the pattern itself (not its layers): marked on its input.
export const PATTERN_CODES = new Set(['regex', 'pattern-shape']);
function aboutPattern(d) {
  return PATTERN_CODES.has(d.code) || (d.code === 'type' && /\.op_name$/.test(d.path || ''));
}

// The item as written in a layer-range message ("layer '40' is outside",
// "range '30-35' is, from layer 32 on, outside").
function itemTextOf(d) {
  const m = d.code === 'layer-range' && /\b(?:layer|range) '([^']+)'/.exec(d.message || '');
  return m ? m[1] : undefined;
}

// The item index of a layer-spec finding names a YAML item the controls
// could not read (it is no range row): the finding goes on the list.
function ownTarget(d, text) {
  let path = d.path || '';
  if (!path && d.code === 'duplicate-key' && d.line) path = pathOfKeys(pathAtLine(text, d.line));
  const own = targetOfPath(path);
  if (!own) return null;
  if (d.code === 'layer-spec') return { ...own, item: undefined };
  if (own.item === undefined && itemTextOf(d) !== undefined) return { ...own, itemText: itemTextOf(d) };
  return own;
}

// {list: [{d, severity, targets, own, layers, field, reason}],
//  byTarget: Map(key -> [{e, item, itemText}]), byLayer: Map(layer -> [{e, columns}]),
//  modelHits: [{field, severity, d}], entryOf: Map(d -> entry)}
// `text` is the YAML the answer is about (for findings reported by line only).
export function analyze(result, text = '') {
  const list = [];
  const modelHits = [];
  const entryOf = new Map();
  for (const [severity, arr] of [['error', result.errors || []], ['warning', result.warnings || []]]) {
    for (const d of arr) {
      const field = modelFieldOf(d);
      if (field) modelHits.push({ field, severity, d });
      const own = d.file && d.file !== 'config' ? null : ownTarget(d, text);
      const targets = d.file && d.file !== 'config' ? [] : [own, ...targetsInMessage(d)].filter(Boolean);
      const e = {
        d, severity, targets, own, field, layers: d.file === 'model' ? null : layersOf(d), pattern: aboutPattern(d),
      };
      e.reason = targets.length || field ? null : reasonOf(d);
      entryOf.set(d, e);
      if (d.file && d.file !== 'config') continue; // model findings are shown by the model panel
      list.push(e);
    }
  }
  const byTarget = new Map();
  const byLayer = new Map();
  for (const e of list) {
    for (const t of e.targets) {
      const k = targetKey(t);
      if (!byTarget.has(k)) byTarget.set(k, []);
      byTarget.get(k).push({ e, item: t.item === undefined ? null : Number(t.item), itemText: t.itemText ?? null });
    }
    if (!e.layers) continue;
    const columns = new Set(e.targets.map(columnOf).filter(Boolean));
    for (const l of e.layers) {
      if (!byLayer.has(l)) byLayer.set(l, []);
      byLayer.get(l).push({ e, columns });
    }
  }
  return {
    list, byTarget, byLayer, modelHits, entryOf,
  };
}

// Does a diagnostic entry touch range [lo, hi] (item index i) of a target?
export function touches(hit, lo, hi, i) {
  if (hit.item !== null) return hit.item === i;
  if (hit.itemText !== null && hit.itemText !== undefined) return hit.itemText === (lo === hi ? `${lo}` : `${lo}-${hi}`);
  if (!hit.e.layers) return false; // about the list or the entry, not one range of it
  for (let l = lo; l <= hi; l += 1) if (hit.e.layers.has(l)) return true;
  return false;
}

// A name for the control a target is, for the findings list.
const FIELD_LABEL = {
  world_size: 'Devices', tensor_parallel: 'TP', pipeline_parallel: 'PP', expert_parallel: 'EP', context_parallel: 'CP',
  micro_batch_size: 'Micro-batch size', micro_batch_num: 'Micro-batches', seq_length: 'Sequence length', sp: 'Sequence parallel',
};
export function targetLabel(t) {
  const base = baseLabel(t);
  if (t.item !== undefined && t.item !== null) return `${base}, range ${Number(t.item) + 1}`;
  if (t.itemText !== undefined) return `${base}, range ${t.itemText}`;
  return base;
}

function baseLabel(t) {
  switch (t.t) {
    case 'full': return 'full_recompute_layer';
    case 'select': return `select_module '${t.key}'`;
    case 'exclude': return `exclude_op '${t.key}'`;
    case 'comm': return `recompute_comm '${t.key}'`;
    case 'layerSwap': return `layer_swap[${t.key}]`;
    case 'opSwap': return `op_swap[${t.key}]`;
    case 'mode': return 'recompute mode';
    case 'commEnable': return 'recompute_comm enable';
    case 'swapEnable': return 'swap enable';
    case 'prefetch': return 'default_prefetch';
    case 'section': return `the ${t.key} section`;
    case 'list': return { select: 'select_module', exclude: 'exclude_op', comm: 'recompute_comm select_module', layerSwap: 'layer_swap', opSwap: 'op_swap' }[t.key];
    case 'field': return `the ${FIELD_LABEL[t.key] || t.key} field`;
    default: return t.t;
  }
}

export function where(d) {
  return d.line ? `YAML line ${d.line}, column ${d.column}` : 'no position';
}
