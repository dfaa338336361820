// The measured-vs-estimated panel: a MindSpore memory-tracker
// ledger CSV or a memopt trace (JSON lines) is sent with the current model
// and config to POST /api/v1/ledger; this module draws its answer from
// store.ledger — the two peaks, the bucket table, what is unexplained on
// each side, and the measured allocation curve under the estimated one.
// It only reads the store; main.js reads the file, sends it and writes
// store.ledger.
import { el, svg, clear } from './util.js';

// The server's default body limit (memopt serve --max-body 1MiB): the
// trace travels inside a JSON string, so its escapes count too.
export const LEDGER_MAX_BODY = 1024 * 1024;

const MIB = 1048576;
export function mib(n) {
  return `${(Number(n) / MIB).toFixed(2)} MiB`;
}

function kib(n) {
  return `${Math.ceil(n / 1024)} KiB`;
}

// Why a file of `size` bytes cannot be sent (null when it can): checked
// before the file is read.
export function traceSizeProblem(name, size, limit = LEDGER_MAX_BODY) {
  if (size === 0) return `${name} is empty.`;
  if (size <= limit) return null;
  return `${name} is ${kib(size)}: the server takes at most ${kib(limit)} per request. ` +
    `Run \`memopt ledger ${name}\` on the command line (it streams traces of any size), ` +
    'or trim the trace to the steps around its peak.';
}

// The request body for POST /api/v1/ledger. `model` is the store's model
// ({preset, obj}); the route takes a preset name or a model file's text.
export function ledgerRequest(trace, model, yaml, stage) {
  const body = { trace, config: yaml };
  body.model = model.preset ? model.preset : JSON.stringify(model.obj);
  if (Number.isInteger(stage) && stage >= 0) body.stage = stage;
  return body;
}

// Downsamples a list of [x, y] to at most `max` points, keeping per
// bucket its lowest and highest (so a peak is never lost).
export function thin(points, max) {
  if (points.length <= max) return points;
  const per = Math.ceil(points.length / Math.floor(max / 2));
  const out = [];
  for (let i = 0; i < points.length; i += per) {
    let lo = i;
    let hi = i;
    for (let j = i; j < Math.min(points.length, i + per); j += 1) {
      if (points[j][1] < points[lo][1]) lo = j;
      if (points[j][1] > points[hi][1]) hi = j;
    }
    for (const k of lo <= hi ? [lo, hi] : [hi, lo]) if (!out.length || out[out.length - 1] !== points[k]) out.push(points[k]);
  }
  return out;
}

// The SVG path of a step curve (the total holds until the next row).
export function stepPath(points, x, y) {
  let d = '';
  points.forEach(([px, py], i) => {
    const X = x(px).toFixed(1);
    const Y = y(py).toFixed(1);
    if (i === 0) d += `M${X},${Y}`;
    else d += `H${X}V${Y}`;
  });
  return d;
}

// ---- the timeline -------------------------------------------------------------

const W = 640;
const LANE = 120;
const PAD = { l: 60, r: 10, t: 14, gap: 34, b: 22 };

function peakIndex(points) {
  let k = 0;
  points.forEach((p, i) => { if (p[1] > points[k][1]) k = i; });
  return k;
}

// One lane: a step curve, its axis and its peak marked.
function lane(g, top, points, maxY, opts) {
  const x0 = points.length ? points[0][0] : 0;
  const x1 = points.length ? points[points.length - 1][0] : 1;
  const x = (v) => PAD.l + (W - PAD.l - PAD.r) * (x1 > x0 ? (v - x0) / (x1 - x0) : 0);
  const y = (v) => top + LANE * (1 - v / maxY);
  g.append(svg('text', { x: PAD.l, y: top - 4, class: 'axis lane-title', text: opts.title }),
    svg('line', { x1: PAD.l, x2: PAD.l, y1: top, y2: top + LANE, class: 'axisline' }),
    svg('line', { x1: PAD.l, x2: W - PAD.r, y1: top + LANE, y2: top + LANE, class: 'axisline' }),
    svg('text', { x: PAD.l - 4, y: top + LANE, class: 'axis', 'text-anchor': 'end', text: '0' }),
    svg('text', { x: PAD.l - 4, y: top + 8, class: 'axis', 'text-anchor': 'end', text: `${Math.round(maxY / MIB)} MiB` }),
    svg('text', { x: W - PAD.r, y: top + LANE + 14, class: 'axis', 'text-anchor': 'end', text: opts.xLabel }));
  if (!points.length) return;
  const area = `${stepPath(points, x, y)}V${y(0).toFixed(1)}H${x(x0).toFixed(1)}Z`;
  g.append(svg('path', { d: area, class: `curve-fill ${opts.cls}` }),
    svg('path', { d: stepPath(points, x, y), class: `curve ${opts.cls}` }));
  const k = peakIndex(points);
  const px = x(points[k][0]);
  const py = y(points[k][1]);
  g.append(svg('line', { x1: px, x2: px, y1: top, y2: top + LANE, class: 'peakline' }),
    svg('circle', { cx: px, cy: py, r: 3.5, class: `peakdot ${opts.cls}` }),
    svg('text', {
      x: px > W / 2 ? px - 5 : px + 5, y: Math.max(top + 10, py - 5), class: 'axis peaktext',
      'text-anchor': px > W / 2 ? 'end' : 'start', text: opts.peakLabel,
    }));
}

// The estimated curve (the estimate's events of one step on the compared
// stage) above the measured one (the trace's rows in time), on one scale.
export function timelineChart(data, estStage) {
  const curve = (data.curve || []).map((p) => [p.time_us, p.bytes]);
  const measured = thin(curve, 1200);
  const est = estStage && estStage.timeline ? estStage.timeline.map((e, i) => [i, e.total_bytes]) : [];
  const maxY = Math.max(1, data.peak.bytes, ...est.map((p) => p[1])) * 1.08;
  const H = PAD.t + 2 * LANE + PAD.gap + PAD.b + 14;
  const estPeak = est.length ? estStage.timeline[peakIndex(est)] : null;
  const cmp = data.compare;
  const label = `Timeline: measured peak ${mib(data.peak.bytes)} at ${((data.peak.time_us - data.first_us) / 1000).toFixed(3)} ms (${data.peak.op}, line ${data.peak.line})` +
    (estPeak ? `; estimated peak of stage ${cmp ? cmp.stage : estStage.stage} ${mib(estPeak.total_bytes)} at ${estPeak.event}` : '; no estimated timeline');
  const chart = svg('svg', { viewBox: `0 0 ${W} ${H}`, class: 'timeline ledger-timeline', role: 'img', 'aria-label': label });
  const g = svg('g');
  lane(g, PAD.t + 10, est, maxY, {
    cls: 'estimated', title: estStage ? `estimated, stage ${estStage.stage}: one step` : 'estimated: no timeline for this config',
    xLabel: 'events of one step, in 1F1B order →',
    peakLabel: estPeak ? `▼ ${mib(estPeak.total_bytes)} · ${estPeak.event}` : '',
  });
  lane(g, PAD.t + 10 + LANE + PAD.gap, measured, maxY, {
    cls: 'measured', title: `measured: ${data.rows} rows of ${data.trace}`,
    xLabel: `time of the rows, ${measured.length ? ((measured[measured.length - 1][0] - measured[0][0]) / 1000).toFixed(1) : 0} ms →`,
    peakLabel: `▼ ${mib(data.peak.bytes)} · ${data.peak.op} (line ${data.peak.line})`,
  });
  chart.append(g);
  return readable(chart, est.length ? estStage.timeline : [], measured, data.first_us, H);
}

// ---- the read-out: the point under the pointer, or the keyboard's ---------------------

function nearest(points, v) {
  let k = 0;
  points.forEach((p, i) => { if (Math.abs(p[0] - v) < Math.abs(points[k][0] - v)) k = i; });
  return k;
}

// The chart read out point by point: the estimated lane event by event,
// the measured lane row by row (the rows drawn); under the pointer, and
// as a keyboard slider over the measured rows.
function readable(chart, events, measured, firstUs, H) {
  const out = el('p', { class: 'readout', id: 'ledger-readout' });
  const line = svg('line', { y1: PAD.t, y2: H - PAD.b, class: 'cursorline' });
  chart.append(line);
  const span = (pts) => [pts.length ? pts[0][0] : 0, pts.length ? pts[pts.length - 1][0] : 1];
  const xOf = (pts, v) => { const [a, b] = span(pts); return PAD.l + (W - PAD.l - PAD.r) * (b > a ? (v - a) / (b - a) : 0); };
  const vOf = (pts, x) => { const [a, b] = span(pts); return a + ((x - PAD.l) / (W - PAD.l - PAD.r)) * (b - a); };
  const est = events.map((e, i) => [i, e.total_bytes]);
  const wrap = el('div', {
    class: 'chart-read', tabindex: 0, role: 'slider', 'aria-label': `${chart.getAttribute('aria-label')}. Read the measured rows one by one`,
    'aria-valuemin': 1, 'aria-valuemax': Math.max(1, measured.length), dataset: { key: 'ledger/readout' },
  }, chart);
  const sayMeasured = (k) => {
    if (!measured.length) return;
    const i = Math.max(0, Math.min(measured.length - 1, k));
    wrap.cursor = i;
    const x = xOf(measured, measured[i][0]).toFixed(1);
    line.setAttribute('x1', x);
    line.setAttribute('x2', x);
    const text = `Measured, row ${i + 1} of ${measured.length} drawn: ${mib(measured[i][1])} at ${((measured[i][0] - firstUs) / 1000).toFixed(3)} ms`;
    out.textContent = text;
    wrap.setAttribute('aria-valuenow', i + 1);
    wrap.setAttribute('aria-valuetext', text);
  };
  const sayEstimated = (k) => {
    const i = Math.max(0, Math.min(est.length - 1, k));
    const x = xOf(est, i).toFixed(1);
    line.setAttribute('x1', x);
    line.setAttribute('x2', x);
    out.textContent = `Estimated, event ${i + 1} of ${est.length}, "${events[i].event}": ${mib(events[i].total_bytes)}`;
  };
  const splitY = PAD.t + 10 + LANE + PAD.gap / 2;
  chart.setAttribute('aria-hidden', 'true');
  wrap.addEventListener('pointermove', (e) => {
    const r = chart.getBoundingClientRect();
    const vx = ((e.clientX - r.left) / Math.max(1, r.width)) * W;
    const vy = ((e.clientY - r.top) / Math.max(1, r.height)) * H;
    if (vy < splitY && est.length) sayEstimated(Math.round(vOf(est, vx)));
    else sayMeasured(nearest(measured, vOf(measured, vx)));
  });
  wrap.addEventListener('keydown', (e) => {
    const step = { ArrowLeft: -1, ArrowDown: -1, ArrowRight: 1, ArrowUp: 1, PageDown: -10, PageUp: 10 }[e.key];
    if (step !== undefined) sayMeasured((wrap.cursor ?? 0) + step);
    else if (e.key === 'Home') sayMeasured(0);
    else if (e.key === 'End') sayMeasured(measured.length - 1);
    else return;
    e.preventDefault();
  });
  sayMeasured(peakIndex(measured.length ? measured : [[0, 0]]));
  return el('div', { class: 'chart-box' }, wrap, out);
}

// ---- tables -------------------------------------------------------------------------

function table(caption, head, rows, cls = '') {
  return el('table', { class: `ledger-table ${cls}` },
    el('caption', { text: caption }),
    el('thead', {}, el('tr', {}, head.map((h) => el('th', { scope: 'col', text: h })))),
    el('tbody', {}, rows.map((r) => el('tr', {}, r.map((c, i) => (i === 0 ? el('th', { scope: 'row', text: c })
      : el('td', { class: /MiB$|^\d+$/.test(c) ? 'num' : 'txt', text: c })))))));
}

// The largest SHOWN rows (by total) in view; all of them behind a
// disclosure when there are more.
const SHOWN = 10;
function longTable(caption, head, items, cls) {
  const sorted = [...items].sort((a, b) => b.total - a.total).map((x) => x.row);
  if (sorted.length <= SHOWN) return table(caption, head, sorted, cls);
  return el('div', {},
    table(`${caption} (the ${SHOWN} largest)`, head, sorted.slice(0, SHOWN), cls),
    el('details', {}, el('summary', { text: `All ${sorted.length}` }), table(caption, head, sorted, `${cls}-all`)));
}

function diff(m, e) {
  const d = m - e;
  return `${d >= 0 ? '+' : '−'}${mib(Math.abs(d))}`;
}

function comparison(data) {
  const c = data.compare;
  const box = el('div', { class: 'ledger-compare' });
  box.append(table('Bucket by bucket at the two peaks', ['bucket', 'measured', 'estimated', 'measured − estimated'],
    c.buckets.map((b) => [b.bucket, mib(b.measured_bytes), mib(b.estimated_bytes), diff(b.measured_bytes, b.estimated_bytes)]), 'buckets'));
  const bs = c.between_steps;
  if (bs) {
    box.append(el('p', {
      class: 'note between-steps',
      text: bs.step === null
        ? `Between steps: the trace has no step after a whole one (estimated ${mib(bs.estimated_bytes)}).`
        : `Between steps (allocated when step ${bs.step} starts): measured ${mib(bs.measured_bytes)}, estimated ${mib(bs.estimated_bytes)}, measured − estimated ${diff(bs.measured_bytes, bs.estimated_bytes)}.`,
    }));
  }
  const um = c.unexplained_measured || [];
  const ue = c.unexplained_estimated || [];
  const sumM = um.reduce((a, x) => a + x.size * x.count, 0);
  const sumE = ue.reduce((a, x) => a + x.bytes * x.count, 0);
  box.append(el('h3', { text: `Unexplained on the measured side: ${mib(sumM)} in ${um.length} groups` }));
  if (um.length) {
    box.append(longTable('Alive rows at the measured peak that no estimated tensor matches', ['op', 'size', 'count', 'total', 'lifetime'],
      um.map((x) => ({ total: x.size * x.count, row: [x.op, mib(x.size), String(x.count), mib(x.size * x.count), x.class] })), 'unexplained-measured'));
  } else box.append(el('p', { class: 'note', text: 'Every row alive at the measured peak is matched.' }));
  box.append(el('h3', { text: `Unexplained on the estimated side: ${mib(sumE)} in ${ue.length} groups of tensors` }));
  if (ue.length) {
    box.append(longTable('Estimated tensors at the estimated peak that no measured row matches', ['tensor', 'op', 'bucket', 'size', 'count', 'total'],
      ue.map((x) => ({ total: x.bytes * x.count, row: [x.tensor, x.op, x.bucket, mib(x.bytes), String(x.count), mib(x.bytes * x.count)] })), 'unexplained-estimated'));
  } else box.append(el('p', { class: 'note', text: 'Every estimated tensor is matched.' }));
  return box;
}

function excerpt(text, line, column) {
  if (!text || !line) return null;
  const src = text.split('\n', line)[line - 1];
  if (src === undefined) return null;
  const col = Math.max(1, column || 1);
  const from = col > 160 ? col - 80 : 0; // a long line: the part around the column
  return el('pre', { class: 'excerpt', text: `${String(line).padStart(4)} | ${from ? '…' : ''}${src.slice(from, from + 200)}\n     | ${' '.repeat(col - 1 - from + (from ? 1 : 0))}^` });
}

// The status line of store.ledger (reading, sending with progress, error).
function status(lg) {
  if (lg.state === 'error') {
    const p = lg.problem || {};
    const where = p.line ? `line ${p.line}, column ${p.column || 1}: ` : '';
    return el('div', { class: 'ledger-error', role: 'alert' },
      el('p', { class: 'flag error' }, el('span', { class: 'sev', text: '⚠ error' }),
        ` ${lg.name ? `${lg.name}: ` : ''}${where}${p.detail || p.title || lg.message || 'the trace was refused'}`,
        p.type ? el('code', { class: 'code', text: ` (${String(p.type).replace(/^.*\//, '')})` }) : null),
      excerpt(lg.text, p.line, p.column));
  }
  if (lg.state === 'reading' || lg.state === 'sending') {
    const pr = el('progress', { max: lg.total || 1, 'aria-label': `Sending ${lg.name}` });
    if (lg.state === 'sending' && lg.total) pr.value = lg.sent || 0;
    return el('p', { class: 'flag' },
      `${lg.state === 'reading' ? 'Reading' : lg.sent >= lg.total ? 'The server is reading' : 'Sending'} ${lg.name} (${kib(lg.size)})… `, pr);
  }
  return null;
}

// Renders store.ledger (and the estimate's stage it was compared with).
export function renderLedger(box, lg, stale) {
  clear(box);
  if (!lg) return;
  const st = status(lg);
  if (st) box.append(st);
  const data = lg.data;
  if (!data || lg.state === 'error') return;
  const c = data.compare;
  const figs = el('dl', { class: 'ledger-peaks' },
    el('dt', { text: 'measured peak' }),
    el('dd', { class: 'measured-peak', text: mib(data.peak.bytes) }),
    el('dd', { class: 'sub', text: `${data.peak.op} at line ${data.peak.line}, ${((data.peak.time_us - data.first_us) / 1000).toFixed(3)} ms into the trace (${data.format}, ${data.rows} rows)` }));
  if (c) {
    const d = c.estimate_peak_bytes - data.peak.bytes;
    figs.append(el('dt', { text: `estimated peak, stage ${c.stage}` }),
      el('dd', { class: 'estimated-peak', text: mib(c.estimate_peak_bytes) }),
      el('dd', { class: 'sub', text: `${c.estimate_peak_event}; ${d >= 0 ? '+' : '−'}${mib(Math.abs(d))} (${d >= 0 ? '+' : '−'}${(Math.abs(d) / data.peak.bytes * 100).toFixed(1)} %) against the measured` }));
  }
  box.append(figs);
  if (stale) {
    box.append(el('p', { class: 'flag warning stale' }, el('span', { class: 'sev', text: '! ' }),
      'The model or the config changed since this comparison. ', el('button', { type: 'button', id: 'ledger-again', text: 'Compare again' })));
  }
  box.append(timelineChart(data, lg.estStage));
  if (c) box.append(comparison(data));
  else box.append(el('p', { class: 'note', text: 'No comparison: the request had no model.' }));
}
