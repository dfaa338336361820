// Parallel and batch settings: they edit the request's `model` object
// (the model file's keys, docs/model-file.md). DP follows the device count: devices / (TP · PP · CP).
import { el, clear, uid } from './util.js';

// The devices a model may name, as the server lists them (GET
// /api/v1/presets: devices); set once at start.
export const devices = { list: [] };

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

export function renderParallel(root, ctx) {
  const obj = ctx.state.model.obj;
  clear(root);
  root.append(el('legend', { text: 'Parallelism and batch' }));
  if (!obj) {
    root.append(el('p', { class: 'note', text: 'They come with the model: none is loaded.' }));
    return;
  }
  const grid = el('div', { class: 'pgrid' });
  for (const f of FIELDS) {
    const id = uid('p');
    const sec = obj[f.sec] || (obj[f.sec] = {});
    const input = el('input', {
      type: 'number', id, min: f.min, step: 1, class: 'num', value: sec[f.key] ?? '',
      title: TITLES[f.key],
      'aria-describedby': f.key === 'world_size' ? 'devices-hint' : null,
      dataset: { key: `par/${f.key}` },
      on: {
        change: (e) => {
          const v = Number.parseInt(e.target.value, 10);
          if (e.target.value === '' && f.key === 'world_size') delete sec[f.key];
          else if (!Number.isInteger(v) || v < f.min) return;
          else sec[f.key] = v;
          if (f.sec === 'parallel') rederiveDp(obj);
          ctx.modelChanged(`par/${f.key}`);
        },
      },
    });
    const field = el('div', { class: 'field' }, el('label', { for: id, text: f.label }), input);
    if (f.key === 'world_size') {
      const unknown = deviceCountUnknown(obj);
      field.append(el('span', {
        id: 'devices-hint', class: `field-hint${unknown ? ' needed' : ''}`,
        text: unknown ? 'needed for the estimate' : sec[f.key] ? '' : 'from the file',
      }));
    }
    grid.append(field);
  }
  const spId = uid('sp');
  grid.append(el('div', { class: 'check' },
    el('input', {
      type: 'checkbox', id: spId, checked: !!(obj.parallel && obj.parallel.sequence_parallel),
      dataset: { key: 'par/sp' },
      on: { change: (e) => { obj.parallel.sequence_parallel = e.target.checked; ctx.modelChanged('par/sp'); } },
    }),
    el('label', { for: spId, text: 'Sequence parallel (SP)' })));
  const devId = uid('dev');
  const dev = el('select', {
    id: devId, dataset: { key: 'par/device' },
    on: { change: (e) => { obj.device = e.target.value; ctx.modelChanged('par/device'); } },
  });
  const current = typeof obj.device === 'string' ? obj.device : 'custom';
  const names = devices.list.map((d) => d.name);
  for (const d of devices.list) dev.append(el('option', { value: d.name, text: `${d.name} (${d.memory_gib} GiB)`, selected: d.name === current }));
  if (!names.includes(current)) dev.append(el('option', { value: current, text: current, selected: true }));
  grid.append(el('div', { class: 'field' }, el('label', { for: devId, text: 'Device' }), dev));
  const p = obj.parallel || {};
  grid.append(el('p', { class: 'derived' },
    `DP ${p.data_parallel ?? '—'} · FSDP shard ${p.data_parallel_shard === -1 ? (p.data_parallel ? `${p.data_parallel} (all DP ranks)` : 'all DP ranks (set Devices)') : p.data_parallel_shard ?? '—'} · VPP ${p.virtual_pipeline ?? 1}`));
  root.append(grid);
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
