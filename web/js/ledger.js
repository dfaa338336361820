// The measured-vs-estimated panel: a MindSpore memory-tracker
// ledger CSV or a memopt trace (JSON lines) is sent with the current model
// and config to POST /api/v1/ledger; this module draws its answer from
// store.ledger — the two peaks, the bucket table, what is unexplained on
// each side, and the measured allocation curve under the estimated one.
// It only reads the store; main.js reads the file, sends it and writes
// store.ledger.
import { el, svg, clear } from './util.js';
import { requestModel } from './model.js';

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
// ({preset, obj}): the model on show goes, as the estimate's does.
export function ledgerRequest(trace, model, yaml, stage) {
  const body = { trace, config: yaml };
  const m = requestModel(model);
  if (m !== null) body.model = m;
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

// ---- the chart: both curves on one time axis -------------------------------------------

const W = 640;
const PLOT_H = 220;
const PAD = { l: 60, r: 12, t: 16, b: 34 };

function peakIndex(points) {
  let k = 0;
  points.forEach((p, i) => { if (p[1] > points[k][1]) k = i; });
  return k;
}

// Where the estimated step sits on the trace's clock (µs) and why. With a
// step marker (memopt ledger --step-start) the estimated step starts where
// the measured step holding the peak starts; a trace without one has no
// step start to match, so the estimated peak is placed at the measured one.
export function estimatedPlacement(data, events) {
  const timed = events.filter((e) => Number.isFinite(e.start_seconds));
  if (!timed.length) return null;
  const step = data.step_start ? (data.steps || []).find((s) => s.index === data.peak.step) : null;
  if (step) {
    return { offsetUs: step.start_us, how: `the estimated step starts where measured step ${step.index} starts` };
  }
  const peak = timed[peakIndex(timed.map((e) => [0, e.total_bytes]))];
  return {
    offsetUs: data.peak.time_us - peak.start_seconds * 1e6,
    how: 'the trace marks no step start, so the estimated peak is placed at the measured peak',
  };
}

// The estimate's timed events as [time_us, bytes] on the trace's clock, and
// one more point where the last of them ends (the step's end).
export function estimatedPoints(events, offsetUs) {
  const timed = events.filter((e) => Number.isFinite(e.start_seconds));
  const pts = timed.map((e) => [offsetUs + e.start_seconds * 1e6, e.total_bytes]);
  if (timed.length) {
    const last = timed[timed.length - 1];
    pts.push([offsetUs + (last.start_seconds + (last.seconds || 0)) * 1e6, last.total_bytes]);
  }
  return { pts, timed };
}

// Axis ticks over [a, b]: about five, the step a round one (1, 2 or 5 x 10^n).
export function ticks(a, b) {
  const span = b - a;
  if (!(span > 0)) return [a];
  const raw = span / 5;
  const mag = 10 ** Math.floor(Math.log10(raw));
  const near = (v) => Math.abs(Math.log(v / raw));
  const step = [1, 2, 5, 10].map((k) => k * mag).reduce((b, v) => (near(v) < near(b) ? v : b));
  const out = [];
  for (let v = Math.ceil(a / step) * step; v <= b + step * 1e-9; v += step) out.push(Number(v.toPrecision(12)));
  return out;
}

function msText(v) {
  const a = Math.abs(v);
  return `${a >= 100 ? v.toFixed(0) : a >= 1 ? v.toFixed(1) : v.toFixed(3)} ms`;
}

// The index of the last point at or before t (a step curve holds its
// value until the next point); -1 before the first.
function atOrBefore(points, t) {
  let lo = 0;
  let hi = points.length - 1;
  let k = -1;
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    if (points[mid][0] <= t) { k = mid; lo = mid + 1; } else hi = mid - 1;
  }
  return k;
}

// The measured curve (the trace's rows) and the estimated one (the
// estimate's events of one step on the compared stage, at the times the
// step-time model gives them) on one time axis, in ms from the trace's
// first row. view 'trace' spans the measured rows, 'step' the rows and the
// whole estimated step.
export function timelineChart(data, estStage, view = 'trace') {
  const measured = thin((data.curve || []).map((p) => [p.time_us, p.bytes]), 1200);
  const events = estStage && estStage.timeline ? estStage.timeline : [];
  const place = estimatedPlacement(data, events);
  const { pts: est, timed } = place ? estimatedPoints(events, place.offsetUs) : { pts: [], timed: [] };
  const t0 = data.first_us;
  let lo = measured.length ? measured[0][0] : t0;
  let hi = measured.length ? measured[measured.length - 1][0] : t0 + 1;
  const outside = est.length && (est[0][0] < lo || est[est.length - 1][0] > hi);
  if (view === 'step' && est.length) {
    lo = Math.min(lo, est[0][0]);
    hi = Math.max(hi, est[est.length - 1][0]);
  }
  if (hi <= lo) hi = lo + 1;
  const maxY = Math.max(1, data.peak.bytes, ...est.map((p) => p[1])) * 1.08;
  const H = PAD.t + PLOT_H + PAD.b;
  const x = (us) => PAD.l + (W - PAD.l - PAD.r) * ((us - lo) / (hi - lo));
  const y = (v) => PAD.t + PLOT_H * (1 - v / maxY);
  const estPeak = est.length ? timed[peakIndex(est.slice(0, timed.length))] : null;
  const stageNo = data.compare ? data.compare.stage : estStage ? estStage.stage : '?';
  const label = `Timeline: measured peak ${mib(data.peak.bytes)} at ${msText((data.peak.time_us - t0) / 1000)} (${data.peak.op}, line ${data.peak.line})` +
    (estPeak ? `; estimated peak of stage ${stageNo} ${mib(estPeak.total_bytes)} at ${estPeak.event}, ${msText((place.offsetUs + estPeak.start_seconds * 1e6 - t0) / 1000)}; one time axis: ${place.how}` : '; no estimated timeline on the time axis');
  const chart = svg('svg', { viewBox: `0 0 ${W} ${H}`, class: 'timeline ledger-timeline', role: 'img', 'aria-label': label });
  const clipId = 'ledger-plot-clip';
  const plot = svg('g', { class: 'plot', 'clip-path': `url(#${clipId})` });
  chart.append(svg('defs', {}, svg('clipPath', { id: clipId }, svg('rect', { x: PAD.l, y: 0, width: W - PAD.l - PAD.r, height: PAD.t + PLOT_H }))));
  const axis = svg('g', { class: 'x-axis' },
    svg('line', { x1: PAD.l, x2: W - PAD.r, y1: PAD.t + PLOT_H, y2: PAD.t + PLOT_H, class: 'axisline' }),
    svg('text', { x: W - PAD.r, y: H - 2, class: 'axis', 'text-anchor': 'end', text: 'ms from the trace’s first row →' }));
  for (const v of ticks((lo - t0) / 1000, (hi - t0) / 1000)) {
    const X = x(t0 + v * 1000);
    axis.append(svg('line', { x1: X, x2: X, y1: PAD.t + PLOT_H, y2: PAD.t + PLOT_H + 4, class: 'axisline' }),
      svg('text', { x: X, y: PAD.t + PLOT_H + 16, class: 'axis tick', 'text-anchor': 'middle', text: msText(v) }));
  }
  chart.append(axis,
    svg('line', { x1: PAD.l, x2: PAD.l, y1: PAD.t, y2: PAD.t + PLOT_H, class: 'axisline' }),
    svg('text', { x: PAD.l - 4, y: PAD.t + PLOT_H, class: 'axis', 'text-anchor': 'end', text: '0' }),
    svg('text', { x: PAD.l - 4, y: PAD.t + 8, class: 'axis', 'text-anchor': 'end', text: `${Math.round(maxY / MIB)} MiB` }));
  const curve = (points, cls) => {
    if (!points.length) return;
    const first = x(points[0][0]).toFixed(1);
    plot.append(svg('path', { d: `${stepPath(points, x, y)}V${y(0).toFixed(1)}H${first}Z`, class: `curve-fill ${cls}` }),
      svg('path', { d: stepPath(points, x, y), class: `curve ${cls}` }));
  };
  curve(measured, 'measured');
  curve(est, 'estimated');
  const dot = (points, k, cls) => {
    if (!points.length) return;
    plot.append(svg('circle', { cx: x(points[k][0]), cy: y(points[k][1]), r: 3.5, class: `peakdot ${cls}` }));
  };
  dot(measured, peakIndex(measured), 'measured');
  if (estPeak) dot(est, timed.indexOf(estPeak), 'estimated');
  chart.append(plot);
  const geo = { x, lo, hi, t0, H };
  return { chart, measured, est, timed, place, outside, geo };
}

// The chart, its legend, the read-out (the two values at the time under the
// pointer, or at the measured row the keyboard picked) and the view switch.
function chartBox(data, estStage, view) {
  const c = timelineChart(data, estStage, view);
  const { chart, measured, est, timed, place, geo } = c;
  const out = el('p', { class: 'readout', id: 'ledger-readout' });
  const line = svg('line', { y1: PAD.t, y2: PAD.t + PLOT_H, class: 'cursorline' });
  chart.append(line);
  const ms = (us) => msText((us - geo.t0) / 1000);
  const estimatedAt = (t) => {
    if (!est.length || t > est[est.length - 1][0]) return 'no estimated event at that time';
    const k = atOrBefore(est, t);
    if (k < 0) return 'no estimated event at that time';
    const ev = timed[Math.min(k, timed.length - 1)];
    return `estimated ${mib(ev.total_bytes)} ("${ev.event}")`;
  };
  const wrap = el('div', {
    class: 'chart-read', tabindex: 0, role: 'slider', 'aria-label': `${chart.getAttribute('aria-label')}. Read the measured rows one by one`,
    'aria-valuemin': 1, 'aria-valuemax': Math.max(1, measured.length), dataset: { key: 'ledger/readout' },
  }, chart);
  const cursor = (t) => {
    const X = Math.max(PAD.l, Math.min(W - PAD.r, geo.x(t))).toFixed(1);
    line.setAttribute('x1', X);
    line.setAttribute('x2', X);
  };
  const sayRow = (k) => {
    if (!measured.length) return;
    const i = Math.max(0, Math.min(measured.length - 1, k));
    wrap.cursor = i;
    cursor(measured[i][0]);
    const text = `Measured, row ${i + 1} of ${measured.length} drawn: ${mib(measured[i][1])} at ${ms(measured[i][0])}; at that time ${estimatedAt(measured[i][0])}`;
    out.textContent = text;
    wrap.setAttribute('aria-valuenow', i + 1);
    wrap.setAttribute('aria-valuetext', text);
  };
  const sayTime = (t) => {
    cursor(t);
    const k = atOrBefore(measured, t);
    const m = k < 0 || t > measured[measured.length - 1][0] ? 'no measured row' : `measured ${mib(measured[k][1])}`;
    out.textContent = `At ${ms(t)}: ${m}, ${estimatedAt(t)}`;
  };
  chart.setAttribute('aria-hidden', 'true');
  wrap.addEventListener('pointermove', (e) => {
    const r = chart.getBoundingClientRect();
    const vx = ((e.clientX - r.left) / Math.max(1, r.width)) * W;
    sayTime(geo.lo + ((vx - PAD.l) / (W - PAD.l - PAD.r)) * (geo.hi - geo.lo));
  });
  wrap.addEventListener('keydown', (e) => {
    const step = { ArrowLeft: -1, ArrowDown: -1, ArrowRight: 1, ArrowUp: 1, PageDown: -10, PageUp: 10 }[e.key];
    if (step !== undefined) sayRow((wrap.cursor ?? 0) + step);
    else if (e.key === 'Home') sayRow(0);
    else if (e.key === 'End') sayRow(measured.length - 1);
    else return;
    e.preventDefault();
  });
  sayRow(peakIndex(measured.length ? measured : [[0, 0]]));
  const box = el('div', { class: 'chart-box ledger-chart' });
  const legend = el('p', { class: 'legend ledger-legend' },
    el('span', { class: 'swatch measured', 'aria-hidden': 'true' }), ` measured: ${data.rows} rows of ${data.trace}  `,
    el('span', { class: 'swatch estimated', 'aria-hidden': 'true' }),
    est.length ? ` estimated, stage ${estStage.stage}: one step at the step-time model's times (${place.how})`
      : estStage ? ' estimated: the estimate gave its events no times, so there is no estimated curve on this axis' : ' estimated: no timeline for this config');
  box.append(wrap, out, legend);
  if (c.outside) {
    const whole = view === 'step';
    box.append(el('button', {
      type: 'button', class: 'ledger-view', 'aria-pressed': whole ? 'true' : 'false',
      text: whole ? 'Show the measured rows only' : `Show the whole estimated step (${msText((est[est.length - 1][0] - est[0][0]) / 1000)})`,
      on: { click: () => { const next = chartBox(data, estStage, whole ? 'trace' : 'step'); box.replaceWith(next); next.querySelector('.ledger-view').focus(); } },
    }));
  }
  return box;
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
  box.append(chartBox(data, lg.estStage, 'trace'));
  if (c) box.append(comparison(data));
  else box.append(el('p', { class: 'note', text: 'No comparison: the request had no model.' }));
}
