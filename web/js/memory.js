// Memory panels fed by POST /api/v1/estimate: per stage a stacked bar
// against the capacity, per stage the timeline of one step with the
// capacity line and the peak event, per layer the activations before and
// after the plan, and the step-time overhead. Every figure carries its
// formula (data-formula: shown on hover and on focus).
import { el, svg, clear, gib, pct, rangesText } from './util.js';

export const BUCKETS = [
  ['weights', 'weights'],
  ['gradients', 'gradients'],
  ['optimizer', 'optimizer states'],
  ['activations', 'activations'],
  ['recomputed', 'recomputed (in backward)'],
  ['swap_buffers', 'swap buffers'],
  ['gathered_weights', 'gathered weights (FSDP)'],
  ['loss_scratch', 'loss scratch'],
  ['workspaces', 'GEMM workspaces and kept caches'],
  ['pipeline_inputs', 'pipeline inputs'],
];
const LABEL = Object.fromEntries(BUCKETS);

// The stages over the device's capacity in an estimate answer:
// [{stage, layers, peak, capacity, event}] (empty without an estimate).
export function outOfMemory(res) {
  if (!res || !res.ok || !res.data || !res.data.stages) return [];
  const est = res.data;
  return est.stages.filter((s) => s.peak_bytes > est.capacity_bytes).map((s) => ({
    stage: s.stage, layers: stageLayers(s, est) || '?', peak: s.peak_bytes, capacity: est.capacity_bytes, event: s.peak_event,
  }));
}

function stageBuckets(s) {
  if (s.peak_by_bucket) return s.peak_by_bucket;
  return {
    weights: s.weights_bytes, gradients: s.gradients_bytes, optimizer: s.optimizer_bytes,
    activations: s.activations_bytes, swap_buffers: s.swap_buffer_bytes || 0,
  };
}

// The layers a stage holds: from the per-layer figures when the answer has
// them (under VPP a stage holds several chunks: "4-7, 12-15"), else the
// stage's first layer and count.
export function stageLayers(s, est) {
  const mine = est && est.layers ? est.layers.filter((l) => l.stage === s.stage).map((l) => l.layer) : null;
  if (mine && mine.length) {
    const ranges = [];
    for (const l of mine.sort((a, b) => a - b)) {
      const last = ranges[ranges.length - 1];
      if (last && l === last[1] + 1) last[1] = l;
      else ranges.push([l, l]);
    }
    return rangesText(ranges);
  }
  if (s.num_layers === undefined || s.first_layer === undefined) return '';
  return s.num_layers ? rangesText([[s.first_layer, s.first_layer + s.num_layers - 1]]) : 'none';
}

function formula(key, s, est, model) {
  const p = (model && model.parallel) || {};
  const t = (model && model.training) || {};
  const b = stageBuckets(s)[key] || 0;
  const layers = stageLayers(s, est);
  const stageL = (est.layers || []).filter((l) => l.stage === s.stage);
  const act1 = stageL.reduce((a, l) => a + (l.activation_bytes || 0), 0);
  switch (key) {
    case 'weights':
      return `weights = parameters of layers ${layers} (plus embedding/head on the first/last stage) / TP ${p.tensor_parallel ?? 1} / FSDP shard ${p.data_parallel_shard === -1 ? 'of all data-parallel devices' : p.data_parallel_shard ?? '?'} × bytes of ${t.params_dtype ?? 'params_dtype'} = ${gib(b)}`;
    case 'gradients':
      return `gradients = this device's parameter shard × bytes per gradient = ${gib(b)}`;
    case 'optimizer':
      return `optimizer = ${t.optimizer ?? 'adamw'} states (AdamW: 2 fp32 moments per parameter) of the shard${p.distributed_optimizer ? ', divided by DP (distributed optimizer)' : ''} = ${gib(b)}`;
    case 'activations':
      return `activations at the peak event = kept tensors of the micro-batches in flight; one micro-batch keeps Σ layers ${layers} activation_bytes = ${gib(act1)}; in flight (1F1B) ${s.in_flight ?? '?'} → ${gib(b)} at "${s.peak_event}"`;
    case 'recomputed':
      return `recomputed = a recomputed layer's activations, alive again during its backward = ${gib(b)}`;
    case 'swap_buffers':
      return `swap buffers = prefetch window (default_prefetch layers) of swapped activations on the device = ${gib(b)}`;
    case 'gathered_weights':
      return `gathered weights = FSDP all-gathered parameters of the running layer (kept gathered under PP) = ${gib(b)}`;
    case 'loss_scratch':
      return `loss scratch = logits and fp32 log-softmax planes (s × b × vocab) on the last stage = ${gib(b)}`;
    case 'workspaces':
      return `GEMM workspaces and kept caches = Transformer Engine's and PyTorch's two cuBLAS workspaces, allocated at the first GEMM and kept (the device's workspace_mib; 0 under the mindspore rules, where they are inside the calibrated figures), and the caches the first step allocates and never frees (with gradient_accumulation_fusion: Transformer Engine's dummy weight gradients, one per distinct weight shape of the stage's Linears and the output layer; with sequence parallelism: the output layer's gathered input, s/CP × b × h, in Megatron's global buffer on the last stage; with multi-latent attention: each attention module's YaRN cos/sin tables and cached rotary embedding; with the alltoall MoE dispatcher: each MoE layer's last routing) = ${gib(b)}`;
    case 'pipeline_inputs':
      return `pipeline inputs = per model chunk that receives its input from the previous stage, the last one and its gradient (Megatron's set_input_tensor keeps them until the chunk's next forward): 2 × s/CP (/TP under SP) × b × h × compute bytes each = ${gib(b)}`;
    default:
      return '';
  }
}

function peakFormula(s, est) {
  const bk = stageBuckets(s);
  const terms = BUCKETS.filter(([k]) => bk[k]).map(([k]) => `${LABEL[k]} ${gib(bk[k])}`);
  return `stage ${s.stage} peak = ${terms.join(' + ')} = ${gib(s.peak_bytes)} at "${s.peak_event}"; capacity ${gib(est.capacity_bytes)} (device memory minus the runtime's reserve); reserved pool at the peak ${gib(s.reserved_peak_bytes)}${s.between_steps_bytes !== undefined ? `; between steps ${gib(s.between_steps_bytes)} stay allocated (parameter state, workspaces, pipeline inputs)` : ''}`;
}

function bar(s, est, model, scale) {
  const bk = stageBuckets(s);
  const track = el('div', { class: 'mbar', role: 'group', 'aria-label': `Stage ${s.stage}: memory at the peak by kind` });
  for (const [k, label] of BUCKETS) {
    const v = bk[k] || 0;
    if (!v) continue;
    const seg = el('span', {
      class: `seg b-${k}`, tabindex: 0, role: 'img',
      'aria-label': `${label} ${gib(v)}`, dataset: { formula: formula(k, s, est, model) },
    });
    seg.style.width = `${(v / scale) * 100}%`;
    track.append(seg);
  }
  const cap = el('span', { class: 'cap', 'aria-hidden': 'true' });
  cap.style.left = `${(est.capacity_bytes / scale) * 100}%`;
  track.append(cap);
  return track;
}

function legend() {
  return el('ul', { class: 'mlegend', 'aria-label': 'Legend' },
    BUCKETS.map(([k, label]) => el('li', {}, el('span', { class: `sw b-${k}`, 'aria-hidden': 'true' }), label)),
    el('li', {}, el('span', { class: 'sw capsw', 'aria-hidden': 'true' }), 'capacity'));
}

function tabs(names, current, onPick, label, keyPrefix) {
  const list = el('div', { class: 'tabs', role: 'tablist', 'aria-label': label });
  const buttons = names.map(([id, text]) => el('button', {
    type: 'button', role: 'tab', id: `${keyPrefix}-${id}`, 'aria-selected': String(id === current),
    tabindex: id === current ? 0 : -1, 'aria-controls': `${keyPrefix}-panel`, dataset: { key: `${keyPrefix}/${id}` },
    on: { click: () => onPick(id) },
  }, text));
  list.addEventListener('keydown', (e) => {
    const i = buttons.indexOf(document.activeElement);
    if (i < 0) return;
    let j = null;
    if (e.key === 'ArrowRight') j = (i + 1) % buttons.length;
    else if (e.key === 'ArrowLeft') j = (i - 1 + buttons.length) % buttons.length;
    else if (e.key === 'Home') j = 0;
    else if (e.key === 'End') j = buttons.length - 1;
    if (j === null) return;
    e.preventDefault();
    buttons[j].focus();
    buttons[j].click();
  });
  list.append(...buttons);
  return list;
}

function stagesPanel(est, model) {
  const scale = Math.max(est.capacity_bytes, ...est.stages.map((s) => s.peak_bytes)) * 1.05 || 1;
  const box = el('div', { class: 'stages' });
  for (const s of est.stages) {
    const over = s.peak_bytes > est.capacity_bytes;
    box.append(el('div', { class: `stage${over ? ' over' : ''}`, dataset: { stage: s.stage } },
      el('div', { class: 'stage-label' },
        el('strong', { text: `Stage ${s.stage}` }),
        ` layers ${stageLayers(s, est) || '?'}`,
        s.in_flight !== undefined ? ` · ${s.in_flight} micro-batch${s.in_flight === 1 ? '' : 'es'} in flight` : ''),
      bar(s, est, model, scale),
      el('div', { class: 'stage-value' },
        el('span', {
          class: 'figure', tabindex: 0, dataset: { formula: peakFormula(s, est) },
          text: `${gib(s.peak_bytes)} / ${gib(est.capacity_bytes)}`,
        }),
        over ? el('span', { class: 'badge error', text: `⚠ over by ${gib(s.peak_bytes - est.capacity_bytes)}` })
          : el('span', { class: 'badge ok', text: `✓ fits, ${gib(est.capacity_bytes - s.peak_bytes)} free` }))));
  }
  return el('div', {}, box, legend());
}

function timelineChart(s, est) {
  const tl = s.timeline || [];
  const W = 640;
  const H = 200;
  const pad = { l: 48, r: 8, t: 10, b: 22 };
  const maxTotal = Math.max(est.capacity_bytes, ...tl.map((e) => e.total_bytes)) * 1.05 || 1;
  const y = (v) => pad.t + (H - pad.t - pad.b) * (1 - v / maxTotal);
  const cw = (W - pad.l - pad.r) / Math.max(1, tl.length);
  let peakI = 0;
  tl.forEach((e, i) => { if (e.total_bytes > tl[peakI].total_bytes) peakI = i; });
  const peak = tl[peakI];
  const g = svg('g');
  tl.forEach((e, i) => {
    let acc = 0;
    for (const [k] of BUCKETS) {
      const v = (e.bytes && e.bytes[k]) || 0;
      if (!v) continue;
      g.append(svg('rect', {
        x: (pad.l + i * cw).toFixed(2), y: y(acc + v).toFixed(2), width: Math.max(cw, 0.6).toFixed(2),
        height: Math.max(0, y(acc) - y(acc + v)).toFixed(2), fill: `url(#pt-${k})`,
      }));
      acc += v;
    }
  });
  const capY = y(est.capacity_bytes);
  const chart = svg('svg', {
    viewBox: `0 0 ${W} ${H}`, class: 'timeline', role: 'img',
    'aria-label': `Stage ${s.stage} timeline: ${tl.length} events; peak ${peak ? gib(peak.total_bytes) : '?'} at ${peak ? peak.event : '?'}; capacity ${gib(est.capacity_bytes)}`,
  },
  svg('defs', {}, ...patternDefs()),
  g,
  svg('line', { x1: pad.l, x2: W - pad.r, y1: capY, y2: capY, class: 'capline' }),
  svg('text', { x: W - pad.r, y: capY - 3, class: 'axis', 'text-anchor': 'end', text: `capacity ${gib(est.capacity_bytes)}` }),
  svg('line', { x1: pad.l, x2: pad.l, y1: pad.t, y2: H - pad.b, class: 'axisline' }),
  svg('text', { x: pad.l - 4, y: y(0), class: 'axis', 'text-anchor': 'end', text: '0' }),
  svg('text', { x: pad.l - 4, y: y(maxTotal / 1.05) + 4, class: 'axis', 'text-anchor': 'end', text: gib(maxTotal / 1.05).replace(' GiB', 'G') }),
  svg('text', { x: pad.l, y: H - 6, class: 'axis', text: 'forward / backward events of one step, in 1F1B order →' }));
  if (peak) {
    const px = pad.l + (peakI + 0.5) * cw;
    chart.append(svg('line', { x1: px, x2: px, y1: pad.t, y2: H - pad.b, class: 'peakline' }),
      svg('text', { x: Math.min(px + 4, W - 120), y: pad.t + 10, class: 'axis peaktext', text: `▼ peak: ${peak.event}` }));
  }
  return { chart, peak, peakI };
}

const HATCH = {
  weights: 'M0,6 L6,0', gradients: 'M0,0 L6,6', optimizer: 'M0,0 L6,6 M0,6 L6,0', activations: '',
  recomputed: 'M3,0 L3,6', swap_buffers: 'M0,3 L6,3', gathered_weights: 'M1,1 L2,2 M4,4 L5,5', loss_scratch: 'M0,3 L6,3 M3,0 L3,6',
  workspaces: 'M0,2 L2,0 M4,6 L6,4',
  pipeline_inputs: 'M0,1 L6,1 M0,4 L6,4',
};

// Per bucket a fill of its colour plus its own hatching: the buckets differ
// by more than colour.
function patternDefs() {
  return BUCKETS.map(([k]) => svg('pattern', { id: `pt-${k}`, width: 6, height: 6, patternUnits: 'userSpaceOnUse' },
    svg('rect', { width: 6, height: 6, class: `b-${k}` }),
    HATCH[k] ? svg('path', { d: HATCH[k], class: 'hatch' }) : null));
}

// One event of a timeline in words: where it is, its total, its buckets.
export function eventText(tl, i) {
  const e = tl[i];
  const parts = BUCKETS.filter(([k]) => e.bytes && e.bytes[k]).map(([k, label]) => `${label} ${gib(e.bytes[k])}`);
  return `Event ${i + 1} of ${tl.length}, "${e.event}": ${gib(e.total_bytes)}${parts.length ? ` (${parts.join(', ')})` : ''}`;
}

// The chart read out event by event: under the pointer, and as a slider
// for the keyboard (arrows, Page Up / Down, Home / End); a line marks the
// event read.
function readableChart(chart, s, est, peakI) {
  const tl = s.timeline;
  const W = 640;
  const pad = 48;
  const cw = (W - pad - 8) / Math.max(1, tl.length);
  const line = svg('line', { y1: 10, y2: 178, class: 'cursorline' });
  chart.append(line);
  chart.setAttribute('aria-hidden', 'true');
  chart.removeAttribute('role');
  const out = el('p', { class: 'readout', id: `tl-readout-${s.stage}` });
  const wrap = el('div', {
    class: 'chart-read', tabindex: 0, role: 'slider', dataset: { key: `tl/${s.stage}` },
    'aria-label': `Stage ${s.stage} timeline, event by event (${tl.length} events; capacity ${gib(est.capacity_bytes)})`,
    'aria-valuemin': 1, 'aria-valuemax': tl.length,
  }, chart);
  const show = (i) => {
    const k = Math.max(0, Math.min(tl.length - 1, i));
    wrap.cursor = k;
    const x = (pad + (k + 0.5) * cw).toFixed(1);
    line.setAttribute('x1', x);
    line.setAttribute('x2', x);
    const text = eventText(tl, k);
    out.textContent = text;
    wrap.setAttribute('aria-valuenow', k + 1);
    wrap.setAttribute('aria-valuetext', text);
  };
  show(peakI);
  wrap.addEventListener('pointermove', (e) => {
    const r = chart.getBoundingClientRect();
    const vx = ((e.clientX - r.left) / Math.max(1, r.width)) * W;
    show(Math.floor((vx - pad) / cw));
  });
  wrap.addEventListener('keydown', (e) => {
    const step = { ArrowLeft: -1, ArrowDown: -1, ArrowRight: 1, ArrowUp: 1, PageDown: -10, PageUp: 10 }[e.key];
    if (step !== undefined) show(wrap.cursor + step);
    else if (e.key === 'Home') show(0);
    else if (e.key === 'End') show(tl.length - 1);
    else return;
    e.preventDefault();
  });
  return el('div', { class: 'chart-box' }, wrap, out);
}

function timelinePanel(est, ctx) {
  const ui = ctx.ui;
  const s = est.stages.find((x) => x.stage === ui.stage) || est.stages[0];
  const box = el('div', { class: 'tl' });
  if (est.stages.length > 1) {
    box.append(tabs(est.stages.map((x) => [x.stage, `Stage ${x.stage}`]), s.stage,
      (id) => { ui.stage = Number(id); ctx.uiChanged(); }, 'Pipeline stage', 'stage'));
  }
  const panel = el('div', { id: 'stage-panel', role: est.stages.length > 1 ? 'tabpanel' : null, 'aria-labelledby': est.stages.length > 1 ? `stage-${s.stage}` : null });
  if (!s.timeline || !s.timeline.length) {
    panel.append(el('p', { class: 'note', text: 'This estimate has no timeline.' }));
    box.append(panel);
    return box;
  }
  const { chart, peak, peakI } = timelineChart(s, est);
  panel.append(readableChart(chart, s, est, peakI));
  const bk = peak.bytes || {};
  const parts = BUCKETS.filter(([k]) => bk[k]).map(([k, label]) => `${label} ${gib(bk[k])}`);
  const over = peak.total_bytes > est.capacity_bytes;
  panel.append(el('p', { class: `peak-note${over ? ' over' : ''}`, tabindex: 0, dataset: { formula: `peak = ${parts.join(' + ')} = ${gib(peak.total_bytes)}` } },
    el('strong', { text: over ? '⚠ Runs out at the peak. ' : 'Peak. ' }),
    `The highest point of stage ${s.stage} is "${peak.event}": ${gib(peak.total_bytes)} (${parts.join(', ')}) against ${gib(est.capacity_bytes)}. `,
    /backward/.test(peak.event)
      ? 'In backward the activations of the micro-batches still in flight are all held, and a recomputed layer\'s tensors exist again for a moment.'
      : 'In forward each new micro-batch adds its kept activations until backward starts releasing them.',
    est.timeline_truncated ? ' (The step is cut after the steady state.)' : ''));
  box.append(panel);
  return box;
}

function layersPanel(est) {
  const rows = est.layers || [];
  const max = Math.max(1, ...rows.map((l) => Math.max(l.baseline_activation_bytes || 0, l.activation_bytes || 0)));
  const table = el('table', { class: 'players' },
    el('caption', { class: 'vh', text: 'Activations one micro-batch keeps, per layer, before and after the plan' }),
    el('thead', {}, el('tr', {},
      ...['Layer', 'Stage', 'Before', 'After', 'Saved', '', 'Recompute FLOPs', 'Swap'].map((t) => (t ? el('th', { scope: 'col', text: t })
        : el('th', { scope: 'col' }, el('span', { class: 'vh', text: 'Before and after, drawn' })))))));
  const body = el('tbody');
  for (const l of rows) {
    const before = l.baseline_activation_bytes || 0;
    const after = l.activation_bytes || 0;
    const b1 = el('span', { class: 'lb before' });
    b1.style.width = `${(before / max) * 100}%`;
    const b2 = el('span', { class: 'lb after' });
    b2.style.width = `${(after / max) * 100}%`;
    body.append(el('tr', {},
      el('th', { scope: 'row', text: String(l.layer) }),
      el('td', { text: String(l.stage ?? '') }),
      el('td', { text: gib(before) }),
      el('td', { text: gib(after) }),
      el('td', { text: before ? pct(((before - after) / before) * 100, 0) : '—' }),
      el('td', { class: 'lbars', 'aria-hidden': 'true' }, b1, b2),
      el('td', { text: l.recompute_flops ? `${(l.recompute_flops / 1e12).toFixed(2)} T` : '—' }),
      el('td', { text: l.swap_bytes ? gib(l.swap_bytes) : '—' })));
  }
  table.append(body);
  return el('div', {
    class: 'players-wrap', tabindex: 0, role: 'region', 'aria-label': 'Per-layer activations (scrollable)',
  }, table);
}

// ctx: {estimate (the /estimate answer), lastGood (the last answer with
// stages), model, ui ({tab, stage}, in the store), valid, focusDevices(),
// uiChanged()}. While the config has errors the last estimate stays,
// marked as such, so the page does not jump.
// How far to trust the figures: the rules' measured accuracy (which runs,
// what error), what they assume, the values the model import filled in,
// and what the estimate leaves out (its unmodelled findings).
function trustPanel(est, leftOut, importAssumed) {
  const a = est.accuracy || {};
  const runs = a.runs || [];
  const count = a.run_count ?? runs.length;
  const box = el('details', { class: 'trust', id: 'trust' });
  const head = count
    ? `Measured accuracy of the ${a.rules} rules: median error ${pct(a.median_abs_error_percent, 2)} on ${count} runs, worst ${pct(a.max_abs_error_percent, 2)} (${a.worst_run})`
    : `The ${a.rules || est.framework} rules: no measured run to compare with`;
  box.append(el('summary', { text: head }));
  if (a.note) box.append(el('p', { class: 'note', text: `These rules: ${a.note}.` }));
  if (runs.length) {
    const table = el('table', { class: 'trust-runs' },
      el('caption', { class: 'vh', text: 'Measured runs against the estimate' }),
      el('thead', {}, el('tr', {}, ...['Run', 'Set', 'Measured MiB', 'Estimated MiB', 'Error'].map((t) => el('th', { scope: 'col', text: t })))));
    const body = el('tbody');
    for (const r of runs) {
      body.append(el('tr', {}, el('th', { scope: 'row', text: r.run }), el('td', { text: r.set }),
        el('td', { class: 'num', text: r.measured_mib.toFixed(1) }), el('td', { class: 'num', text: r.estimated_mib.toFixed(1) }),
        el('td', { class: 'num', text: `${r.error_percent > 0 ? '+' : ''}${r.error_percent.toFixed(2)}%` })));
    }
    table.append(body);
    box.append(el('div', { class: 'trust-wrap' }, table), el('p', { class: 'note', text: `Sources: ${[...new Set(runs.map((r) => r.source))].join('; ')}.` }));
  }
  // an uploaded model is sent back whole: what its import assumed is the import's to say
  const assumed = importAssumed && importAssumed.length ? importAssumed : est.assumed || [];
  box.append(el('p', { class: 'note', text: assumed.length ? 'Values the model file leaves out, assumed:' : 'The model file leaves no value to assume.' }));
  if (assumed.length) {
    box.append(el('ul', { class: 'assumed' }, ...assumed.map((x) => el('li', {}, el('code', { text: x.path }), ` = ${x.value} (${x.source})`))));
  }
  box.append(el('p', { class: 'note', text: leftOut.length
    ? `Left out of the estimate (unmodelled, see Findings): ${leftOut.map((d) => d.path || d.code).join(', ')}.`
    : 'Nothing in this file is known to be left out of the estimate.' }));
  return box;
}

// The step time the time model gives (the estimate answer's "time"): the
// step, tokens per second per device and MFU, and what the step is made of
// (the terms add up to the step).
const TIME_TERMS = [
  ['gemm_seconds', 'matrix multiplies'], ['attention_seconds', 'attention'],
  ['memory_bound_seconds', 'memory-bound ops'], ['comm_tp_seconds', 'tensor-parallel comm'],
  ['comm_cp_seconds', 'context-parallel comm'], ['comm_ep_seconds', 'expert-parallel comm'],
  ['comm_pp_seconds', 'pipeline comm'], ['comm_dp_seconds', 'data-parallel comm'],
  ['bubble_seconds', 'pipeline bubble'], ['optimizer_seconds', 'optimizer step'],
  ['recompute_seconds', 'recompute'], ['swap_seconds', 'swap not hidden'], ['fixed_seconds', 'fixed launch costs'],
];

function secs(v) {
  return v >= 1 ? `${v.toFixed(2)} s` : `${(v * 1000).toFixed(v >= 0.1 ? 0 : 1)} ms`;
}

export function stepTimeText(t) {
  return `Step ${secs(t.step_seconds)} · ${Math.round(t.tokens_per_second_per_device).toLocaleString('en-US')} tokens/s per device · MFU ${pct(t.mfu * 100)}`;
}

function timeDetails(t) {
  const box = el('details', { class: 'steptime', id: 'step-time' });
  box.append(el('summary', { text: stepTimeText(t) }));
  const rows = TIME_TERMS.filter(([k]) => t[k] > 0);
  const table = el('table', { class: 'time-terms' },
    el('caption', { class: 'vh', text: 'What one training step is made of' }),
    el('thead', {}, el('tr', {}, ...['Part', 'Time', 'Share'].map((x) => el('th', { scope: 'col', text: x })))));
  const body = el('tbody');
  for (const [k, label] of rows) {
    body.append(el('tr', { dataset: { term: k } }, el('th', { scope: 'row', text: label }),
      el('td', { class: 'num', text: secs(t[k]) }),
      el('td', { class: 'num', text: pct((t[k] / t.step_seconds) * 100, 0) })));
  }
  table.append(body);
  box.append(table, el('p', { class: 'note', text: `The slowest stage is ${t.slowest_stage}; its largest part is ${t.largest_term || '?'}. MFU = the model FLOPs of a step, all devices (${(t.model_flops / 1e12).toFixed(0)} TFLOP) / (step time × devices × one device's peak rate); tokens/s per device = the tokens of a step (micro-batches × batch × sequence × data-parallel ranks) / step time / devices.` }));
  return box;
}

export function renderMemory(root, ctx) {
  const res = ctx.estimate;
  const focusKey = document.activeElement && root.contains(document.activeElement) ? document.activeElement.dataset.key : null;
  clear(root);
  if (!res || res.pending) {
    root.append(el('p', { class: 'note', text: 'Estimating…' }));
    return;
  }
  if (res.modelNeeded) {
    root.append(el('p', { class: 'note unavailable', role: 'note', id: 'memory-model-needed' },
      el('strong', { text: `${ctx.neededCode || 'model-needed'}: no estimate. ` }), ctx.needed || 'Upload the model, or pick a preset.'));
    return;
  }
  if (res.devicesUnknown) {
    root.append(el('p', { class: 'note unavailable', role: 'note' },
      el('strong', { text: 'Set the device count. ' }),
      'This model shards over every device (FSDP shard -1) and does not say how many there are: the estimate needs the ',
      el('button', { type: 'button', class: 'link', text: 'Devices field', on: { click: ctx.focusDevices } }),
      ' in Parallelism and batch.'));
    return;
  }
  if (res.status === 501) {
    root.append(el('p', { class: 'note unavailable', role: 'note' },
      el('strong', { text: 'Estimator not available. ' }),
      'This server answers 501 for POST /api/v1/estimate: the memory estimator is not part of its build yet. The layer map, the findings and the export work without it.'));
    return;
  }
  if (!res.ok) {
    root.append(el('p', { class: 'note', text: `No estimate: ${(res.problem && (res.problem.detail || res.problem.title)) || `HTTP ${res.status}`}` }));
    return;
  }
  let est = res.data;
  let stale = false;
  if (!est || !est.stages || !est.stages.length) {
    const errs = (est && est.errors && est.errors.length) || 0;
    if (!ctx.lastGood) {
      root.append(el('p', { class: 'note', text: errs ? `No estimate while the config has ${errs} error${errs === 1 ? '' : 's'}.` : 'No estimate.' }));
      return;
    }
    est = ctx.lastGood.data;
    stale = `The config has ${errs || 'an'} error${errs === 1 ? '' : 's'}: figures of the last valid config.`;
  }
  const ui = ctx.ui;
  const model = ctx.model;
  const over = est.peak_bytes > est.capacity_bytes;
  const cost = est.cost || {};
  const summary = el('div', { class: `msummary${stale ? ' stale' : ''}` },
    el('span', {
      class: `figure big${over ? ' over' : ''}${stale ? ' stale-figure' : ''}`, tabindex: 0, id: 'peak-figure',
      dataset: { formula: `peak = the highest allocated total over every stage's timeline = ${gib(est.peak_bytes)}; capacity = ${gib(est.capacity_bytes)}; reserved pool at the peak ${gib(est.reserved_peak_bytes)}` },
    // a config with errors has no figure of its own: the last valid one is labelled as such, never ticked
    }, `${stale ? 'Last valid plan: peak ' : over ? '⚠ Out of memory: peak ' : '✓ Peak '}${gib(est.peak_bytes)} of ${gib(est.capacity_bytes)}`),
    el('span', {
      class: 'figure', tabindex: 0, id: 'overhead-figure',
      dataset: { formula: `overhead = (step with plan − step without) / step without = (${(cost.step_seconds ?? 0).toFixed(3)} s − ${(cost.step_seconds_baseline ?? 0).toFixed(3)} s) / ${(cost.step_seconds_baseline ?? 0).toFixed(3)} s; recompute ${(cost.recompute_seconds ?? 0).toFixed(3)} s, comm recompute ${(cost.comm_recompute_seconds ?? 0).toFixed(3)} s, swap ${(cost.swap_seconds ?? 0).toFixed(3)} s of which ${(cost.swap_hidden_seconds ?? 0).toFixed(3)} s hidden by prefetch` },
    }, `Step time +${pct(est.overhead_percent ?? 0)}`),
    // a line of its own that is always there, so that the panel keeps its
    // height while a drag passes through an error
    el('span', { class: 'mstate' }, stale ? el('span', { class: 'stale-note', id: 'memory-stale', role: 'note', title: stale, text: stale }) : ''));
  root.append(summary);
  if (est.time && est.time.step_seconds > 0) root.append(timeDetails(est.time));
  root.append(trustPanel(est, ctx.leftOut || [], ctx.assumed));
  const names = [['stages', 'Stages'], ['timeline', 'Timeline'], ['layers', 'Per layer']];
  if (!names.some(([id]) => id === ui.tab)) ui.tab = 'stages';
  root.append(tabs(names, ui.tab, (id) => { ui.tab = id; ctx.uiChanged(); }, 'Memory views', 'mtab'));
  const panel = el('div', { id: 'mtab-panel', role: 'tabpanel', 'aria-labelledby': `mtab-${ui.tab}`, class: stale ? 'stale' : null });
  if (ui.tab === 'stages') panel.append(stagesPanel(est, model));
  else if (ui.tab === 'timeline') panel.append(timelinePanel(est, ctx));
  else panel.append(layersPanel(est));
  root.append(panel);
  if (focusKey) root.querySelector(`[data-key="${CSS.escape(focusKey)}"]`)?.focus();
}
