// The measured-step-time panel: a training log (Megatron-LM's `elapsed
// time per iteration (ms)` lines or MindSpore Transformers'
// `per_step_time`), opened or pasted, is sent with the current model and
// config to POST /api/v1/calibrate; this module draws its answer from
// store.steplog — the log's median step time, memopt's modelled step time
// and their ratio, or the log's error at its line and column. It only
// reads the store; main.js reads the file, sends it and writes
// store.steplog.
import { el, clear } from './util.js';
import { requestModel } from './model.js';

// The server's default body limit (memopt serve --max-body 1MiB); the log
// travels inside a JSON string, so its escapes count too.
export const STEPLOG_MAX_BODY = 1024 * 1024;

const FORMATS = {
  'megatron-lm': 'Megatron-LM (elapsed time per iteration)',
  mindformers: 'MindSpore Transformers (per_step_time)',
  mixed: 'both Megatron-LM and MindSpore Transformers lines',
};

// Seconds in words: ms below one second, four significant digits.
export function stepTime(s) {
  const v = Number(s);
  if (!Number.isFinite(v)) return '—';
  return v < 1 ? `${Number((v * 1000).toPrecision(4))} ms` : `${Number(v.toPrecision(4))} s`;
}

// measured / modelled, and what it means in words.
export function ratioWords(measured, modelled) {
  const r = measured / modelled;
  if (!Number.isFinite(r) || r <= 0) return { ratio: null, text: 'no ratio: the modelled step time is 0' };
  const pct = Math.abs(r - 1) * 100;
  const how = Math.abs(r - 1) < 0.005 ? 'the measured step is as long as the modelled one'
    : `the measured step is ${pct.toFixed(pct < 10 ? 1 : 0)}% ${r > 1 ? 'longer' : 'shorter'} than the modelled one`;
  return { ratio: r, text: how };
}

// The request body: one run, the model on show and the config the page
// prices (the estimate's own, so the modelled step is the memory panel's).
export function calibrateRequest(log, model, yaml) {
  return { runs: [{ model: requestModel(model), config: yaml, log }] };
}

// Why a file of `size` bytes cannot be sent (null when it can).
export function logSizeProblem(name, size, limit = STEPLOG_MAX_BODY) {
  if (size === 0) return `${name} is empty.`;
  if (size <= limit) return null;
  return `${name} is ${Math.ceil(size / 1024)} KiB: the server takes at most ${Math.ceil(limit / 1024)} KiB. ` +
    'Keep the lines of a few hundred steps (the time lines are what is read), or run memopt calibrate on the command line.';
}

// The problem's words without the request's member names ("runs[0].log: ").
export function logProblemText(p) {
  return String(p.detail || p.title || 'the server refused the log').replace(/^runs\[\d+\](\.log)?: /, '');
}

function row(term, value, cls, raw, sub) {
  return [el('dt', { text: term }), el('dd', { class: cls, dataset: raw === undefined ? {} : { value: String(raw) } }, value),
    sub ? el('dd', { class: 'sub', text: sub }) : null];
}

function renderAnswer(box, sl, stale) {
  const run = sl.data.runs[0];
  const log = run.log || {};
  const { ratio, text } = ratioWords(run.measured_seconds, run.estimated_before);
  const warm = (log.warmup || []).map((w) => `line ${w.line}${w.iteration >= 0 ? ` (iteration ${w.iteration})` : ''}: ${stepTime(w.seconds)}`).join('; ');
  const extra = [];
  if (log.skipped_iterations) extra.push(`${log.skipped_iterations} skipped iteration${log.skipped_iterations === 1 ? '' : 's'} among them`);
  if (log.nan_iterations) extra.push(`${log.nan_iterations} NaN iteration${log.nan_iterations === 1 ? '' : 's'}`);
  if (stale) {
    box.append(el('p', { class: 'flag warning stale-note' }, el('span', { class: 'sev', text: '!' }),
      ' This comparison is of an earlier model or config. ',
      el('button', { type: 'button', id: 'steplog-again', text: 'Compare again' })));
  }
  box.append(el('dl', { class: 'steplog-figures' },
    row('Measured step time', stepTime(run.measured_seconds), 'measured-step', run.measured_seconds,
      `median of ${log.used} time line${log.used === 1 ? '' : 's'} of ${sl.name} (${FORMATS[log.format] || log.format}); min ${stepTime(log.min_seconds)}, max ${stepTime(log.max_seconds)}${extra.length ? `; ${extra.join(', ')}` : ''}`),
    row('Modelled step time', stepTime(run.estimated_before), 'modelled-step', run.estimated_before,
      `memopt's step-time model for this model and config (device constants of ${sl.data.preset})`),
    row('Measured ÷ modelled', ratio === null ? '—' : ratio.toFixed(3), 'step-ratio', ratio === null ? undefined : ratio, text)));
  if (warm) box.append(el('p', { class: 'note', text: `Left out as warm-up: the first two time lines (${warm}).` }));
}

function renderError(box, sl) {
  const p = sl.problem || {};
  const at = p.line ? `Line ${p.line}, column ${p.column || 1} of ${sl.name}: ` : '';
  box.append(el('p', { class: 'flag error', role: 'alert' }, el('span', { class: 'sev', text: '⚠ error' }), ` ${at}${logProblemText(p)}`));
  const lines = typeof sl.text === 'string' ? sl.text.split('\n') : [];
  if (p.line && lines[p.line - 1] !== undefined) {
    const text = lines[p.line - 1];
    const col = Math.max(1, p.column || 1);
    // long log lines: the part around the column
    const from = Math.max(0, col - 60);
    const shown = (from ? '…' : '') + text.slice(from, from + 120);
    const caret = ' '.repeat(col - 1 - from + (from ? 1 : 0));
    box.append(el('pre', { class: 'excerpt', text: `${String(p.line).padStart(4)} | ${shown}\n     | ${caret}^` }));
  }
}

// Draws store.steplog into box (stale: the model or config changed since).
export function renderSteplog(box, sl, stale) {
  clear(box);
  if (!sl) return;
  if (sl.state === 'sending') {
    box.append(el('p', { class: 'note', text: `Comparing ${sl.name} with the model…` }));
    return;
  }
  if (sl.state === 'error') {
    renderError(box, sl);
    return;
  }
  if (sl.state === 'done' && sl.data && sl.data.runs && sl.data.runs[0]) renderAnswer(box, sl, stale);
}
