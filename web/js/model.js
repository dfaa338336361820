// Parallel and batch settings: they edit the request's `model` object
// (the model file's keys, docs/model-file.md). DP follows the device count: devices / (TP · PP · CP).
import { el, clear, uid } from './util.js';

// The devices a model may name, as the server lists them (GET
// /api/v1/presets: devices); set once at start.
export const devices = { list: [] };

// The model part of every request the page sends (estimate, expand,
// layout, plan, export, size, ledger, calibrate): the model on show, which
// the parallel and batch fields edit, as a model file's text (every route
// takes one; ledger and calibrate take no object). Never a preset's name:
// the server would price the preset as it holds it, not as edited here.
// null when no model is given.
export function requestModel(model) {
  return model && model.obj ? JSON.stringify(model.obj) : null;
}

const FIELDS = [
  { sec: 'parallel', key: 'world_size', label: 'Devices', min: 1 },
  { sec: 'parallel', key: 'tensor_parallel', label: 'TP', min: 1 },
  { sec: 'parallel', key: 'pipeline_parallel', label: 'PP', min: 1 },
  { sec: 'parallel', key: 'expert_parallel', label: 'EP', min: 1 },
  { sec: 'parallel', key: 'context_parallel', label: 'CP', min: 1 },
  { sec: 'training', key: 'micro_batch_size', label: 'Micro-batch size', min: 1 },
  { sec: 'training', key: 'micro_batch_num', label: 'Micro-batches', min: 1 },
  { sec: 'model', key: 'seq_length', label: 'Sequence length', min: 1 },
];

const TITLES = {
  world_size: 'parallel.world_size: devices in the job',
  tensor_parallel: 'parallel.tensor_parallel (TP)',
  pipeline_parallel: 'parallel.pipeline_parallel (PP): pipeline stages',
  expert_parallel: 'parallel.expert_parallel (EP)',
  context_parallel: 'parallel.context_parallel (CP)',
  micro_batch_size: 'training.micro_batch_size',
  micro_batch_num: 'training.micro_batch_num: micro-batches per step',
  seq_length: 'model.seq_length',
};

function rederiveDp(obj) {
  const p = obj.parallel || (obj.parallel = {});
  const ws = p.world_size;
  if (!ws) return;
  const denom = (p.tensor_parallel || 1) * (p.pipeline_parallel || 1) * (p.context_parallel || 1);
  if (ws % denom !== 0) return; // the server's `parallel` finding explains it
  const dp = ws / denom;
  const shardFollows = p.data_parallel_shard === undefined || p.data_parallel_shard === p.data_parallel;
  p.data_parallel = dp;
  if (shardFollows && p.data_parallel_shard !== -1) p.data_parallel_shard = dp;
}

// The estimate needs the device count: a model that shards over every
// device (data_parallel_shard -1) without a world size has none.
export function deviceCountUnknown(obj) {
  const p = (obj && obj.parallel) || {};
  return p.data_parallel_shard === -1 && !p.world_size;
}

// Where the value priced for a field came from, when a training YAML's run
// was read over the model given (the estimate answer's `run`, ctx.state.priced):
// null for the model's own value (or when the model is all its own), else
// {value, file: {key, line, column} or null, text}.
function pricedSource(ctx, sec, key) {
  const run = ctx.state.priced;
  if (!run || !run.model) return null;
  const obj = ctx.state.model.obj;
  const priced = sec ? (run.model[sec] || {})[key] : run.model[key];
  const given = sec ? (obj[sec] || {})[key] : obj[key];
  const yaml = ctx.state.training ? ctx.state.training.name : 'the training YAML';
  const from = (run.from_config || []).find((x) => x.path === (sec ? `${sec}.${key}` : key));
  if (from) {
    return {
      value: priced, file: from, short: from.line ? `${yaml}, line ${from.line}` : yaml,
      text: `from ${yaml}: ${from.key}${from.line ? `, line ${from.line}` : ''}`,
    };
  }
  if (priced === undefined || priced === given) return null;
  return {
    value: priced, file: null, short: `${yaml}'s run`,
    text: `set by the run of ${yaml} (the model ${ctx.state.model.label || ''} says ${given ?? 'nothing'})`,
  };
}

function fieldLabel(f) {
  return f.label;
}

export function renderParallel(root, ctx) {
  const obj = ctx.state.model.obj;
  clear(root);
  root.append(el('legend', { text: 'Parallelism and batch' }));
  if (!obj) {
    root.append(el('p', { class: 'note', text: 'They come with the model: none is loaded.' }));
    return;
  }
  const sources = [];
  const grid = el('div', { class: 'pgrid' });
  for (const f of FIELDS) {
    const id = uid('p');
    const sec = obj[f.sec] || (obj[f.sec] = {});
    const src = pricedSource(ctx, f.sec, f.key);
    const srcId = src ? uid('src') : null;
    if (src) sources.push({ id: srcId, label: fieldLabel(f), src });
    const describedBy = [f.key === 'world_size' ? 'devices-hint' : null, srcId].filter(Boolean).join(' ');
    const input = el('input', {
      type: 'number', id, min: f.min, step: 1, class: 'num', value: src ? src.value ?? '' : sec[f.key] ?? '',
      title: TITLES[f.key],
      // the file's run decides the value: an edit here would not be priced
      readonly: !!src, 'aria-describedby': describedBy || null,
      dataset: { key: `par/${f.key}`, source: src ? (src.file ? 'file' : 'run') : 'model' },
      on: {
        change: (e) => {
          if (src) return;
          const v = Number.parseInt(e.target.value, 10);
          if (e.target.value === '' && f.key === 'world_size') delete sec[f.key];
          else if (!Number.isInteger(v) || v < f.min) return;
          else sec[f.key] = v;
          if (f.sec === 'parallel') rederiveDp(obj);
          ctx.modelChanged(`par/${f.key}`);
        },
      },
    });
    const field = el('div', { class: `field${src ? ' from-run' : ''}` }, el('label', { for: id, text: f.label }), input);
    if (f.key === 'world_size' && !src) {
      const unknown = deviceCountUnknown(obj);
      field.append(el('span', {
        id: 'devices-hint', class: `field-hint${unknown ? ' needed' : ''}`,
        text: unknown ? 'needed for the estimate' : sec[f.key] ? '' : 'from the file',
      }));
    } else if (f.key === 'world_size') {
      field.append(el('span', { id: 'devices-hint', class: 'field-hint', text: '' }));
    }
    if (src) field.append(el('span', { class: 'field-hint run-mark', 'aria-hidden': 'true', text: `↤ ${src.short}` }));
    grid.append(field);
  }
  const sp = pricedSource(ctx, 'parallel', 'sequence_parallel');
  const spId = uid('sp');
  const spSrc = sp ? uid('src') : null;
  if (sp) sources.push({ id: spSrc, label: 'Sequence parallel (SP)', src: { ...sp, value: sp.value ? 'on' : 'off' } });
  grid.append(el('div', { class: `check${sp ? ' from-run' : ''}` },
    el('input', {
      type: 'checkbox', id: spId, checked: sp ? !!sp.value : !!(obj.parallel && obj.parallel.sequence_parallel),
      disabled: !!sp, 'aria-describedby': spSrc,
      dataset: { key: 'par/sp', source: sp ? (sp.file ? 'file' : 'run') : 'model' },
      on: { change: (e) => { obj.parallel.sequence_parallel = e.target.checked; ctx.modelChanged('par/sp'); } },
    }),
    el('label', { for: spId, text: 'Sequence parallel (SP)' })));
  const devId = uid('dev');
  const devSrc = pricedSource(ctx, null, 'device');
  const devSrcId = devSrc ? uid('src') : null;
  if (devSrc) sources.push({ id: devSrcId, label: 'Device', src: devSrc });
  const dev = el('select', {
    id: devId, dataset: { key: 'par/device', source: devSrc ? (devSrc.file ? 'file' : 'run') : 'model' },
    disabled: !!devSrc, 'aria-describedby': devSrcId,
    on: { change: (e) => { obj.device = e.target.value; ctx.modelChanged('par/device'); } },
  });
  const shownDevice = devSrc ? devSrc.value : obj.device;
  const current = typeof shownDevice === 'string' ? shownDevice : 'custom';
  const names = devices.list.map((d) => d.name);
  for (const d of devices.list) dev.append(el('option', { value: d.name, text: `${d.name} (${d.memory_gib} GiB)`, selected: d.name === current }));
  if (!names.includes(current)) dev.append(el('option', { value: current, text: current, selected: true }));
  grid.append(el('div', { class: 'field' }, el('label', { for: devId, text: 'Device' }), dev));
  const run = ctx.state.priced;
  const p = (run && run.model && run.model.parallel) || obj.parallel || {};
  grid.append(el('p', { class: 'derived' },
    `DP ${p.data_parallel ?? '—'} · FSDP shard ${p.data_parallel_shard === -1 ? (p.data_parallel ? `${p.data_parallel} (all DP ranks)` : 'all DP ranks (set Devices)') : p.data_parallel_shard ?? '—'} · VPP ${p.virtual_pipeline ?? 1}`));
  root.append(grid);
  sources.push(...otherRunFields(ctx));
  if (sources.length) root.append(runSources(ctx, sources));
}

// The fields shown above (each says its own source).
const SHOWN = new Set([...FIELDS.map((f) => `${f.sec}.${f.key}`), 'parallel.sequence_parallel', 'device']);

// The other values the training YAML's run gave (the answer's `run`: DP,
// dtypes, the optimizer, attention, dropout, ...), each by its path in the
// model file, with the file's key and line.
function otherRunFields(ctx) {
  const run = ctx.state.priced;
  if (!run || !run.model) return [];
  const yaml = ctx.state.training ? ctx.state.training.name : 'the training YAML';
  return (run.from_config || []).filter((x) => !SHOWN.has(x.path)).map((from) => {
    const value = from.path.split('.').reduce((o, k) => (o == null ? o : o[k]), run.model);
    return {
      id: uid('src'), label: from.path,
      src: {
        value: value !== null && typeof value === 'object' ? JSON.stringify(value) : value ?? '', file: from,
        text: `from ${yaml}: ${from.key}${from.line ? `, line ${from.line}` : ''}`,
      },
    };
  });
}

// The list under the fields: which values the training YAML's run set,
// with the key and line (a button selects the line in the YAML panel).
function runSources(ctx, sources) {
  const yaml = ctx.state.training ? ctx.state.training.name : 'the training YAML';
  const label = ctx.state.model.label || 'the model';
  const ul = el('ul', { class: 'run-sources' });
  for (const s of sources) {
    ul.append(el('li', { id: s.id },
      el('strong', { text: `${s.label} ${s.src.value}` }), ` ${s.src.text}`,
      s.src.file && s.src.file.line && ctx.goToLine
        ? el('button', { type: 'button', class: 'link', on: { click: () => ctx.goToLine(s.src.file.line) }, text: `Show line ${s.src.file.line}` })
        : null));
  }
  return el('div', { class: 'run-note', id: 'run-note', role: 'note' },
    el('p', { text: `Priced with the run of ${yaml} read over the model ${label}: the values marked ↤ are the file's run, not the model's, and the fields cannot change them (edit the file in the YAML panel). The other values are the model's.` }),
    ul);
}

export function modelSummary(obj, layout) {
  const m = obj.model || {};
  const parts = [`${m.num_layers} layers`];
  if (m.mtp_num_layers) parts[0] += ` + ${m.mtp_num_layers} MTP`;
  parts.push(`hidden ${m.hidden_size}`);
  if (m.num_moe_experts) parts.push(`${m.num_moe_experts} experts top-${m.moe_router_topk ?? '?'}`);
  if (m.multi_latent_attention) parts.push('MLA');
  if (m.num_query_groups && m.num_query_groups !== m.num_attention_heads) parts.push(`GQA ${m.num_attention_heads}/${m.num_query_groups}`);
  if (layout) parts.push(`layer types: ${layout.types.map((t) => t.name).join(', ')}`);
  return parts.join(' · ');
}
