// The memopt web UI: wires the model, the plan editor, the layer map, the
// memory panels and the YAML panel to the HTTP API, and keeps the whole
// state in the URL #hash.
import { api, problemText } from './api.js';
import { el, clear, announce } from './util.js';
import {
  emptyConfig, emitYaml, fromSections, spliceTraining, topKeys, encodeShare, decodeShare,
} from './state.js';
import { renderPlan, paintFlags, paintPreviews } from './controls.js';
import { renderParallel, modelSummary } from './model.js';
import { renderMap, renderLegend, renderDetail } from './layermap.js';
import { renderMemory, uiState, setUiState } from './memory.js';
import { analyze, where } from './diags.js';

const $ = (id) => document.getElementById(id);
const DEFAULT_PRESET = 'llama2-7b';
const DEFAULT_YAML = 'recompute:\n  mode: None\n';

const state = {
  model: null,      // {label, preset, obj}: obj is the request's `model` (SPEC 4 keys)
  training: null,   // {name, text, lines}: an uploaded whole training YAML
  yaml: DEFAULT_YAML, // the config text the server checks (the YAML panel)
  cfg: emptyConfig(),
  cfgProblems: [],
};
let layout = null;  // POST /layout answer for the current model and patterns
let layoutKey = '';
let result = null;  // POST /expand answer (diagnostics and, when valid, layers)
let problem = null; // a request the server refused (problem text)
let analysis = null;
let estimate = null;
let detailLayer = null;

// Test and debugging hooks: timings of the refresh round trip.
const perf = { samples: [], last: null };
const hooks = { state, perf, busy: true, ready: false, share: () => shareObject() };
window.memopt = hooks;

// ---- refresh: expand + estimate (+ layout when the model or patterns changed) ----

let running = false;   // one refresh in flight at a time
let dirty = false;     // something changed while it was in flight
let pendingSince = 0;  // the earliest change no answer reflects yet
let estimatorMissing = false; // the server answered 501: do not ask again

function req(extra = {}) {
  return { config: state.yaml, model: state.model.obj, ...extra };
}

function patternKey() {
  const c = state.cfg;
  return JSON.stringify([state.model.obj, c.recompute.select.map((e) => e.pattern),
    c.recompute.exclude.map((e) => e.pattern), c.comm.select.map((e) => e.pattern),
    c.swap.opSwap.map((e) => e.pattern)]);
}

// While a slider moves the requests are coalesced: the first change goes
// out at once, the ones made while it is in flight go out together when
// it is back (never more than one request of each kind in flight).
function schedule() {
  if (running && sentKey === requestKey()) return; // already asked
  if (!running && sentKey === requestKey() && !hooks.busy) return; // already shown
  hooks.busy = true;
  if (!pendingSince) pendingSince = performance.now();
  if (running) {
    dirty = true;
    return;
  }
  run();
}

let sentKey = '';
function requestKey() {
  return state.yaml + JSON.stringify(state.model.obj);
}

let forceNext = {};
let waiters = [];

// Resolves once every change so far is reflected on the page.
function refresh(force = {}) {
  forceNext = { ...forceNext, ...force };
  if (!pendingSince) pendingSince = performance.now();
  const done = new Promise((resolve) => waiters.push(resolve));
  if (running) dirty = true;
  else run();
  return done;
}

async function run() {
  const force = forceNext;
  forceNext = {};
  running = true;
  dirty = false;
  hooks.busy = true;
  const t0 = pendingSince || performance.now();
  pendingSince = 0;
  const key = patternKey();
  sentKey = requestKey();
  const needLayout = force.layout || key !== layoutKey;
  $('results').setAttribute('aria-busy', 'true');
  try {
    const [lay, exp, est] = await Promise.all([
      needLayout ? api.layout(req()) : null,
      api.expand(req({ all_paths: true })),
      estimatorMissing ? { ok: false, status: 501, ms: 0 } : api.estimate(req()),
    ]);
    if (lay && lay.ok) {
      layout = mergeLayout(lay.data);
      layoutKey = key;
    }
    if (est.status === 501) estimatorMissing = true;
    problem = exp.ok ? null : problemText(exp);
    result = exp.ok ? exp.data : null;
    analysis = result ? analyze(result) : null;
    estimate = est;
    const t1 = performance.now();
    renderResults();
    const t2 = performance.now();
    perf.last = {
      ms: t2 - t0, requests: t1 - t0, render: t2 - t1, expand: exp.ms, estimate: est.ms,
      layout: lay ? lay.ms : null, layers: layout ? layout.layer_types.length : 0,
    };
    perf.samples.push(perf.last);
    if (perf.samples.length > 200) perf.samples.shift();
    await painted();
    perf.last.painted = performance.now() - t0;
    saveShare();
  } catch (err) {
    problem = String(err);
    renderResults();
  }
  running = false;
  if (dirty) {
    run();
    return;
  }
  hooks.busy = false;
  $('results').setAttribute('aria-busy', 'false');
  const w = waiters;
  waiters = [];
  for (const resolve of w) resolve();
}

// After the next frame has been painted.
function painted() {
  return new Promise((resolve) => requestAnimationFrame(() => setTimeout(resolve, 0)));
}

// A layout answer for text that is not YAML has no patterns: keep the last.
function mergeLayout(d) {
  if (!d.patterns && layout && layout.types.length === d.types.length) d.patterns = layout.patterns;
  return d;
}

// ---- rendering ------------------------------------------------------------------------

function planCtx() {
  return {
    state,
    layout: () => layout,
    change: (how) => {
      planFresh = false;
      state.yaml = emitYaml(state.cfg).text;
      $('yaml-text').value = state.yaml;
      schedule();
      if (how === 'pattern') paintPreviews($('plan'), null, null);
    },
    rebuild: (focusKey) => {
      planFresh = false;
      state.yaml = emitYaml(state.cfg).text;
      $('yaml-text').value = state.yaml;
      schedule();
      renderControls(focusKey);
    },
  };
}

function renderControls(focusKey) {
  const key = focusKey || (document.activeElement && document.activeElement.dataset && document.activeElement.dataset.key);
  renderPlan($('plan'), planCtx());
  paintPreviews($('plan'), layout, analysis);
  paintFlags($('plan'), analysis);
  if (key) {
    const n = document.querySelector(`[data-key="${CSS.escape(key)}"]`);
    if (n) n.focus();
  }
}

function renderParallelNow(focusKey) {
  renderParallel($('parallel'), {
    state,
    modelChanged: (key) => {
      renderParallelNow(key);
      schedule();
    },
  });
  if (focusKey) document.querySelector(`[data-key="${CSS.escape(focusKey)}"]`)?.focus();
}

function renderMapNow() {
  const plan = result && result.valid && result.layers && sameLayers() ? result.layers : null;
  renderMap($('map-wrap'), {
    cfg: state.cfg, layout, plan: planFresh ? plan : null, analysis,
    onDetail: (l) => { detailLayer = l; renderDetailNow(true); },
  });
}

// The expansion shown must be of the current text; a control that moved
// since shows the requested view until the next answer.
let planFresh = false;
function sameLayers() {
  return layout && result.layers.length === layout.layer_types.length;
}

function renderDetailNow(focus) {
  const plan = result && result.valid && planFresh ? result.layers : null;
  const head = layout ? renderDetail($('layer-detail'), detailLayer, layout, plan) : null;
  if (focus && head) head.focus();
}

function renderDiags() {
  const box = clear($('diags'));
  const modelBox = clear($('model-diags'));
  if (problem) {
    box.append(el('p', { class: 'flag error', role: 'alert' }, el('span', { class: 'sev', text: '⚠ request refused' }), ` ${problem}`));
  }
  if (!result) return;
  const all = [...(result.errors || []).map((d) => ['error', d]), ...(result.warnings || []).map((d) => ['warning', d])];
  const nErr = (result.errors || []).length;
  const nWarn = (result.warnings || []).length;
  box.append(el('p', { class: `diag-summary ${nErr ? 'error' : 'ok'}`, id: 'diag-summary' },
    nErr ? `⚠ ${nErr} error${nErr === 1 ? '' : 's'}` : '✓ valid', nWarn ? ` · ${nWarn} warning${nWarn === 1 ? '' : 's'}` : ''));
  const ul = el('ul', { class: 'diag-list' });
  for (const [sev, d] of all) {
    const fromModel = d.file === 'model';
    const li = el('li', { class: `diag ${sev}`, dataset: { code: d.code } },
      el('span', { class: 'sev', text: sev === 'error' ? '⚠ error' : '! warning' }),
      el('code', { class: 'code', text: d.code }), ' ',
      el('span', { class: 'msg', text: d.message }), ' ',
      fromModel ? el('span', { class: 'where', text: `(model${d.line ? ` line ${d.line}` : ''})` })
        : d.line ? el('button', {
          type: 'button', class: 'link', text: where(d), 'aria-label': `Show ${where(d)} in the YAML`,
          on: { click: () => gotoLine(d.line, d.column) },
        }) : null,
      d.hint ? el('span', { class: 'hint', text: ` — ${d.hint}` }) : null);
    ul.append(li);
    if (fromModel) modelBox.append(li.cloneNode(true));
  }
  box.append(ul);
}

function renderYamlErrors() {
  const box = clear($('yaml-errors'));
  const ta = $('yaml-text');
  const list = result ? [...(result.errors || []), ...(result.warnings || [])].filter((d) => d.file !== 'model' && d.line) : [];
  const errs = result ? (result.errors || []).filter((d) => d.file !== 'model') : [];
  ta.setAttribute('aria-invalid', errs.length ? 'true' : 'false');
  for (const d of list) {
    const sev = (result.errors || []).includes(d) ? 'error' : 'warning';
    box.append(el('button', {
      type: 'button', class: `yerr ${sev}`, on: { click: () => gotoLine(d.line, d.column) },
    }, el('span', { class: 'sev', text: sev === 'error' ? '⚠' : '!' }), ` line ${d.line}:${d.column} `, el('code', { text: d.code }), ` ${d.message}`));
  }
}

function renderExport() {
  const btn = $('export');
  const reason = $('export-reason');
  const errs = result ? result.errors || [] : [];
  let why = '';
  if (problem) why = `Export is blocked: the server refused the request (${problem}).`;
  else if (!result) why = 'Export is blocked until the config has been checked.';
  else if (errs.length) {
    const d = errs[0];
    why = `Export is blocked by ${errs.length} error${errs.length === 1 ? '' : 's'}: ${d.message}${d.line && d.file !== 'model' ? ` (${where(d)})` : d.file === 'model' ? ' (model)' : ''}.`;
  }
  btn.disabled = !!why;
  reason.textContent = why || `Ready: the config is valid${result.warnings && result.warnings.length ? ` (${result.warnings.length} warning${result.warnings.length === 1 ? '' : 's'})` : ''}.${state.training ? ` Exports ${state.training.name} with the three sections replaced.` : ''}`;
  reason.className = `export-reason${why ? ' blocked' : ''}`;
}

function renderResults() {
  planFresh = !!(result && result.valid);
  renderDiags();
  renderYamlErrors();
  paintPreviews($('plan'), layout, analysis);
  paintFlags($('plan'), analysis);
  renderMapNow();
  if (detailLayer !== null) renderDetailNow(false);
  renderMemory($('memory'), estimate, state.model.obj);
  renderExport();
  $('model-summary').textContent = layout ? modelSummary(state.model.obj, layout) : '';
}

function renderModelLabel() {
  $('model-label').textContent = `Model: ${state.model.label}${state.training ? ` (training YAML ${state.training.name})` : ''}`;
  const sel = $('preset');
  sel.value = state.model.preset || '';
  $('yaml-note').textContent = state.training
    ? `The recompute, recompute_comm and swap sections of ${state.training.name}; the export is that file with them replaced.`
    : 'The three sections; edit here or with the controls.';
}

function gotoLine(line, column = 1) {
  const ta = $('yaml-text');
  const lines = ta.value.split('\n');
  let off = 0;
  for (let i = 0; i < line - 1 && i < lines.length; i += 1) off += lines[i].length + 1;
  const end = off + (lines[line - 1] ?? '').length;
  ta.focus();
  ta.setSelectionRange(off + Math.max(0, column - 1), end);
  const lh = parseFloat(getComputedStyle(ta).lineHeight) || 18;
  ta.scrollTop = Math.max(0, (line - 3) * lh);
}

// ---- YAML both ways ----------------------------------------------------------------

let yamlTimer = null;
function onYamlInput() {
  state.yaml = $('yaml-text').value;
  planFresh = false;
  hooks.busy = true;
  clearTimeout(yamlTimer);
  yamlTimer = setTimeout(() => { yamlTimer = null; applyYamlText(); }, 300);
}

// Parses the text through the API; when it is YAML, the controls follow it.
async function applyYamlText() {
  const text = state.yaml;
  const lay = await api.layout(req());
  if (text !== state.yaml) return;
  if (lay.ok) {
    layout = mergeLayout(lay.data);
    layoutKey = '';
    if (lay.data.sections) {
      const { cfg, problems } = fromSections(lay.data.sections);
      state.cfg = cfg;
      state.cfgProblems = problems;
      layoutKey = patternKey();
      renderControls();
    }
  }
  await refresh();
}

// ---- fit to budget: the planner's cheapest config that fits ------------------------

function gib(bytes) {
  return `${(bytes / 2 ** 30).toFixed(2)} GiB`;
}

// Asks POST /plan for the least-overhead config that fits the device (the
// current config's settings are kept), then loads it like an edited YAML.
async function fitToBudget() {
  const status = $('fit-status');
  const button = $('fit');
  button.disabled = true;
  status.textContent = 'Planning…';
  hooks.busy = true;
  const r = await api.plan(req());
  button.disabled = false;
  if (!r.ok) {
    status.textContent = `The planner refused: ${problemText(r)}`;
    hooks.busy = false;
    return;
  }
  const d = r.data;
  if (!d.valid) {
    status.textContent = 'Fix the errors first: the planner starts from a valid config.';
    hooks.busy = false;
    return;
  }
  const staged = d.staged && d.staged.overhead_percent != null
    ? `; the seed's staged escalation costs ${d.staged.overhead_percent.toFixed(1)} %`
    : '; the staged escalation never fits';
  if (d.fits) {
    status.textContent = `Fits: peak ${gib(d.estimate.peak_bytes)} of ${gib(d.budget_bytes)}, ` +
      `step time +${d.overhead_percent.toFixed(1)} %${staged}.`;
  } else {
    status.textContent = `No plan fits ${gib(d.budget_bytes)}: the smallest peak any plan reaches ` +
      `is ${gib(d.estimate.peak_bytes)} (that plan is loaded).`;
  }
  announce(status.textContent);
  state.yaml = d.config;
  $('yaml-text').value = state.yaml;
  planFresh = false;
  await applyYamlText();
}

// ---- model: presets and uploads ----------------------------------------------------------

async function loadPreset(name) {
  const r = await api.preset(name);
  if (!r.ok) {
    uploadStatus('error', `Preset ${name}: ${problemText(r)}`);
    return;
  }
  state.model = { label: name, preset: name, obj: r.data };
  state.training = null;
  renderModelLabel();
  renderParallelNow();
  await refresh({ layout: true });
  renderControls();
  announce(`Model ${name} loaded`);
}

function uploadStatus(kind, text, diags = [], source = '') {
  const box = clear($('upload-status'));
  if (!text) return;
  box.append(el('p', { class: `flag ${kind}`, role: kind === 'error' ? 'alert' : null },
    el('span', { class: 'sev', text: kind === 'error' ? '⚠ error' : kind === 'warning' ? '! warning' : '✓' }), ` ${text}`));
  if (diags.length) {
    const lines = source.split('\n');
    const ul = el('ul', { class: 'diag-list' });
    for (const d of diags) {
      ul.append(el('li', { class: 'diag error' },
        el('span', { class: 'where', text: d.line ? `line ${d.line}, column ${d.column}: ` : '' }),
        el('code', { class: 'code', text: d.code || '' }), ` ${d.message}`,
        d.line && lines[d.line - 1] !== undefined
          ? el('pre', { class: 'excerpt', text: `${String(d.line).padStart(4)} | ${lines[d.line - 1]}\n     | ${' '.repeat(Math.max(0, (d.column || 1) - 1))}^` }) : null));
    }
    box.append(ul);
  }
}

async function upload(file) {
  if (!file) return;
  if (file.size > 1024 * 1024) {
    uploadStatus('error', `${file.name} is ${Math.round(file.size / 1024)} KiB: the limit is 1 MiB.`);
    return;
  }
  uploadStatus('info', `Reading ${file.name}…`);
  const text = await file.text();
  const json = /\.json$/i.test(file.name) || /^\s*[{[]/.test(text);
  if (json) {
    const r = await api.importJson(text);
    if (!r.ok) {
      const p = r.problem || {};
      uploadStatus('error', `${file.name} is not a model: ${p.detail || p.title}`, p.line ? [{ line: p.line, column: p.column, message: p.detail || p.title, code: 'json' }] : [], text);
      return;
    }
    if (r.data.errors && r.data.errors.length) {
      uploadStatus('error', `${file.name} has errors:`, r.data.errors, text);
      return;
    }
    state.model = { label: file.name, preset: null, obj: r.data.model };
    state.training = null;
    uploadStatus('ok', `Loaded the model from ${file.name}.`, [], text);
  } else {
    const lay = await api.layout({ config: text, model: state.model.obj });
    const syntax = lay.ok ? (lay.data.errors || []).filter((d) => d.code === 'yaml-syntax') : [];
    if (!lay.ok || syntax.length) {
      uploadStatus('error', `${file.name} is not YAML:`, syntax.length ? syntax : [{ message: problemText(lay) }], text);
      return;
    }
    const imp = await api.importYaml(text);
    const noModel = imp.status === 422 && imp.problem && /no-model/.test(imp.problem.type || '');
    if (imp.ok) {
      if (imp.data.errors && imp.data.errors.length) {
        uploadStatus('error', `${file.name} has errors in its model:`, imp.data.errors, text);
        return;
      }
      state.model = { label: file.name, preset: null, obj: imp.data.model };
      const keys = [...topKeys(text)];
      const isTraining = keys.some((k) => !['model', 'training', 'parallel', 'device'].includes(k));
      state.training = isTraining ? { name: file.name, text, lines: lay.data.section_lines || {} } : null;
      if (isTraining) {
        const { cfg, problems } = fromSections(lay.data.sections || {});
        state.cfg = cfg;
        state.cfgProblems = problems;
        state.yaml = emitYaml(cfg).text;
        $('yaml-text').value = state.yaml;
      }
      uploadStatus('ok', isTraining ? `Loaded ${file.name}: its model and its three sections; the export keeps every other key.` : `Loaded the model from ${file.name}.`, [], text);
    } else if (noModel) {
      const { cfg, problems } = fromSections(lay.data.sections || {});
      state.cfg = cfg;
      state.cfgProblems = problems;
      state.yaml = text;
      $('yaml-text').value = text;
      uploadStatus('ok', `${file.name} has no model: loaded its sections into the YAML panel.`, [], text);
    } else {
      uploadStatus('error', `${file.name}: ${problemText(imp)}`);
      return;
    }
  }
  renderModelLabel();
  renderParallelNow();
  await refresh({ layout: true });
  renderControls();
  announce(`${file.name} loaded`);
}

// ---- export, copy, share --------------------------------------------------------------

async function doExport() {
  const config = state.training ? spliceTraining(state.training.text, state.training.lines, state.yaml) : state.yaml;
  const r = await api.exportConfig({ config, model: state.model.obj });
  if (!r.ok || !r.data.valid || typeof r.data.yaml !== 'string') {
    $('export-reason').textContent = `Export failed: ${r.ok ? (r.data.errors[0] || {}).message : problemText(r)}`;
    return;
  }
  const blob = new Blob([r.data.yaml], { type: 'application/yaml' });
  const a = el('a', { href: URL.createObjectURL(blob), download: state.training ? state.training.name : 'memopt.yaml' });
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(a.href), 10000);
  announce('memopt.yaml downloaded');
}

async function copyText(text, what) {
  try {
    await navigator.clipboard.writeText(text);
    announce(`${what} copied to the clipboard`);
    return true;
  } catch {
    announce(`Could not copy the ${what}: select it and copy it by hand`);
    return false;
  }
}

function shareObject() {
  return { v: 1, model: state.model, training: state.training, yaml: state.yaml, ui: { ...uiState(), detail: detailLayer } };
}

let shareTimer = null;
function saveShare() {
  clearTimeout(shareTimer);
  shareTimer = setTimeout(async () => {
    const hash = await encodeShare(shareObject());
    if (hash !== location.hash) history.replaceState(null, '', hash);
  }, 150);
}

async function restore(hash) {
  let s;
  try {
    s = await decodeShare(hash);
  } catch {
    s = null;
  }
  if (!s || s.v !== 1 || !s.model || !s.model.obj) return false;
  state.model = s.model;
  state.training = s.training || null;
  state.yaml = typeof s.yaml === 'string' ? s.yaml : DEFAULT_YAML;
  setUiState(s.ui || {});
  detailLayer = s.ui && Number.isInteger(s.ui.detail) ? s.ui.detail : null;
  return true;
}

// ---- tooltips: the formula of a figure on hover and focus -----------------------------------

function showTip(target) {
  const tip = $('tip');
  tip.textContent = target.dataset.formula;
  tip.hidden = false;
  target.setAttribute('aria-describedby', 'tip');
  const r = target.getBoundingClientRect();
  const w = Math.min(420, window.innerWidth - 16);
  tip.style.maxWidth = `${w}px`;
  tip.style.left = `${Math.max(8, Math.min(r.left + window.scrollX, window.scrollX + window.innerWidth - w - 8))}px`;
  tip.style.top = `${r.bottom + window.scrollY + 6}px`;
}

function hideTip(target) {
  $('tip').hidden = true;
  if (target) target.removeAttribute('aria-describedby');
}

function wireTips() {
  document.addEventListener('focusin', (e) => { if (e.target.dataset && e.target.dataset.formula) showTip(e.target); });
  document.addEventListener('focusout', (e) => { if (e.target.dataset && e.target.dataset.formula) hideTip(e.target); });
  document.addEventListener('mouseover', (e) => {
    const t = e.target.closest && e.target.closest('[data-formula]');
    if (t) showTip(t);
  });
  document.addEventListener('mouseout', (e) => {
    const t = e.target.closest && e.target.closest('[data-formula]');
    if (t && !t.contains(e.relatedTarget)) hideTip(t);
  });
  document.addEventListener('keydown', (e) => { if (e.key === 'Escape') hideTip(document.activeElement); });
}

// ---- start ----------------------------------------------------------------------------------

function wire() {
  $('preset').addEventListener('change', (e) => { if (e.target.value) loadPreset(e.target.value); });
  $('file').addEventListener('change', (e) => upload(e.target.files[0]));
  const drop = $('drop');
  drop.addEventListener('dragover', (e) => { e.preventDefault(); drop.classList.add('over'); });
  drop.addEventListener('dragleave', () => drop.classList.remove('over'));
  drop.addEventListener('drop', (e) => {
    e.preventDefault();
    drop.classList.remove('over');
    upload(e.dataTransfer.files[0]);
  });
  $('yaml-text').addEventListener('input', onYamlInput);
  $('export').addEventListener('click', doExport);
  $('copy').addEventListener('click', () => copyText(state.yaml, 'YAML'));
  $('fit').addEventListener('click', fitToBudget);
  $('share').addEventListener('click', async () => {
    history.replaceState(null, '', await encodeShare(shareObject()));
    await copyText(location.href, 'share link');
  });
  document.addEventListener('memopt:ui', saveShare);
  window.addEventListener('hashchange', async () => {
    if (await restore(location.hash)) await start(false);
  });
  wireTips();
  renderLegend($('map-legend'));
}

async function start(first) {
  hooks.ready = false;
  renderModelLabel();
  $('yaml-text').value = state.yaml;
  renderParallelNow();
  // the controls follow the text (the same path as editing the YAML)
  const lay = await api.layout(req());
  if (lay.ok) {
    layout = lay.data;
    if (lay.data.sections) {
      const { cfg, problems } = fromSections(lay.data.sections);
      state.cfg = cfg;
      state.cfgProblems = problems;
    }
    layoutKey = patternKey();
  }
  renderControls();
  await refresh();
  hooks.ready = true;
  if (first) document.documentElement.classList.add('ready');
}

async function main() {
  wire();
  const pr = await api.presets();
  const sel = $('preset');
  sel.append(el('option', { value: '', text: '(uploaded model)' }));
  for (const p of (pr.ok ? pr.data.presets : [])) sel.append(el('option', { value: p.name, text: `${p.name} — ${p.description}` }));
  if (!(location.hash && await restore(location.hash))) {
    const r = await api.preset(DEFAULT_PRESET);
    state.model = { label: DEFAULT_PRESET, preset: DEFAULT_PRESET, obj: r.data };
  }
  await start(true);
}

main();
