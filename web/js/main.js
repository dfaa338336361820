// The memopt web UI's controller: wires the model, the plan editor, the
// layer map, the memory panels, the planner and the YAML panel to the HTTP
// API. The state lives in store.js; this module changes it (every change
// goes through record() so that Undo covers it) and asks the renderers to
// draw it. The edited state is also kept in the URL #hash.
import { api, problemText, postLedger } from './api.js';
import { el, announce, uid } from './util.js';
import {
  emitYaml, fromSections, encodeShare, decodeShare, emptyConfig, carriesRun,
} from './state.js';
import {
  store, DEFAULT_PRESET, DEFAULT_YAML, record, undo, redo, resetHistory, historyState, onHistory, unrecorded,
} from './store.js';
import { editConfigText } from './edit.js';
import { renderPlan, paintFlags, paintPreviews } from './controls.js';
import {
  renderParallel, modelSummary, deviceCountUnknown, devices, requestModel,
} from './model.js';
import { renderMap, renderLegend, renderDetail } from './layermap.js';
import { renderStrip } from './strip.js';
import { renderMemory, outOfMemory } from './memory.js';
import { analyze } from './diags.js';
import {
  renderDiags, renderYamlErrors, renderGutter, renderExport, renderNotice, onRetry, extraWarnings,
} from './findings.js';
import { renderFit, planRequest, describeProposal, changedSections, withSection } from './fit.js';
import { mountSize } from './size.js';
import { renderVariants, loadVariants, keepVariants, variantOf } from './variants.js';
import { renderDiff } from './diff.js';
import { uploadStatus, adoptUpload } from './upload.js';
import { copyText } from './copy.js';
import { migrateSource, renderMigrate, droppedKeys, migratedText } from './migrate.js';
import { renderLedger, ledgerRequest, traceSizeProblem, LEDGER_MAX_BODY, mib } from './ledger.js';
import { renderSteplog, calibrateRequest, logSizeProblem, stepTime, STEPLOG_MAX_BODY } from './steplog.js';

const $ = (id) => document.getElementById(id);

// Test and debugging hooks: timings of the refresh round trip.
const perf = { samples: [], last: null };
const hooks = {
  state: store, perf, busy: true, ready: false, share: () => shareObject(), history: historyState,
};
window.memopt = hooks;

// ---- refresh: expand + estimate (+ layout when the model or patterns changed) ----

let running = false;   // one refresh in flight at a time
let dirty = false;     // something changed while it was in flight
let pendingSince = 0;  // the earliest change no answer reflects yet

// Every request describes the run on show: the YAML panel's text and the
// model as the fields edited it (requestModel, also in the ledger's and
// the calibration's requests).
function req(extra = {}) {
  return { config: store.yaml, model: requestModel(store.model), ...extra };
}

function patternKey() {
  const c = store.cfg;
  return JSON.stringify([store.model.obj, c.recompute.select.map((e) => e.pattern),
    c.recompute.exclude.map((e) => e.pattern), c.comm.select.map((e) => e.pattern),
    c.swap.opSwap.map((e) => e.pattern)]);
}

let sentKey = '';
function requestKey() {
  return store.yaml + JSON.stringify(store.model.obj);
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

// The estimate needs a device count: without one the server answers 422
// on every request, so the page says what to set instead of asking.
function estimateRequest() {
  if (!store.model.obj) return Promise.resolve({ ok: false, status: 0, modelNeeded: true, ms: 0 });
  if (deviceCountUnknown(store.model.obj)) return Promise.resolve({ ok: false, status: 0, devicesUnknown: true, ms: 0 });
  if (store.estimatorMissing) return Promise.resolve({ ok: false, status: 501, ms: 0 });
  return api.estimate(req({ detail: estimateDetail() }));
}

// The page asks only for what it shows: the per-layer figures (the layer
// map and the stage formulas), the timelines while the Timeline tab or a
// trace comparison shows them, every path of each layer while a layer's
// detail is open.
function estimateDetail() {
  return store.ui.tab === 'timeline' || store.ledger ? ['layers', 'timeline', 'accuracy'] : ['layers', 'accuracy'];
}

function hasTimeline(est) {
  return !!(est && est.ok && est.data && est.data.stages && est.data.stages.every((s) => s.timeline));
}

function wantsPaths() {
  return store.detailLayer !== null && store.detailLayer !== undefined;
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
  const sentYaml = store.yaml;
  const noModel = !store.model.obj;
  const needLayout = !noModel && (force.layout || key !== store.layoutKey);
  $('results').setAttribute('aria-busy', 'true');
  try {
    const [lay, exp, est] = await Promise.all([
      needLayout ? api.layout(req()) : null,
      // without a model only the structure is checked (the CLI's validate)
      noModel ? api.validate(req()) : api.expand(req({ all_paths: wantsPaths() })),
      estimateRequest(),
      checkMigrate(),
    ]);
    if (lay && lay.ok) {
      store.layout = mergeLayout(lay.data);
      store.layoutKey = key;
    }
    if (noModel) store.layout = null;
    if (est.status === 501) store.estimatorMissing = true;
    store.offline = exp.status === 0;
    store.problem = exp.ok || store.offline ? null : problemText(exp);
    if (store.offline) retrySoon();
    else store.result = exp.ok ? exp.data : null;
    if (exp.ok && exp.data.valid) store.lastValid = { yaml: sentYaml, name: store.training ? store.training.name : 'memopt.yaml' };
    store.analysis = store.result ? analyze(store.result, store.offline ? store.yaml : sentYaml) : null;
    if (!store.offline) store.estimate = est;
    if (!store.offline) adoptPriced(est);
    if (est.ok && est.data && est.data.stages && est.data.stages.length) store.lastGoodEstimate = est;
    const t1 = performance.now();
    renderResults();
    const t2 = performance.now();
    perf.last = {
      ms: t2 - t0, requests: t1 - t0, render: t2 - t1, expand: exp.ms, estimate: est.ms,
      layout: lay ? lay.ms : null, layers: store.layout ? store.layout.layer_types.length : 0,
    };
    perf.samples.push(perf.last);
    if (perf.samples.length > 200) perf.samples.shift();
    await painted();
    perf.last.painted = performance.now() - t0;
    saveShare();
  } catch (err) {
    store.problem = String(err);
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

// While the server is away the page asks again every few seconds (and at
// once on "Retry now"); the last answers stay on show, marked.
let retryTimer = null;
const RETRY_MS = 4000;
function retrySoon() {
  clearTimeout(retryTimer);
  retryTimer = setTimeout(() => { retryTimer = null; refresh({ layout: true }); }, RETRY_MS);
}

function retryNow() {
  clearTimeout(retryTimer);
  retryTimer = null;
  return refresh({ layout: true });
}

// The layout the estimate priced: a training YAML's run read over the
// model given replaces some of its values (the answer's `run`); the
// parallel fields show what was priced, and say where each value is from.
function adoptPriced(est) {
  const priced = est.ok && est.data && est.data.run ? est.data.run : null;
  if (JSON.stringify(priced) === JSON.stringify(store.priced)) return;
  store.priced = priced;
  const active = document.activeElement;
  const inside = active && active.closest && active.closest('#parallel');
  renderParallelNow(inside && active.dataset ? active.dataset.key : undefined);
}

// After the next frame has been painted.
function painted() {
  return new Promise((resolve) => requestAnimationFrame(() => setTimeout(resolve, 0)));
}

// A layout answer for text that is not YAML has no patterns: keep the last.
function mergeLayout(d) {
  const last = store.layout;
  if (!d.patterns && last && last.types.length === d.types.length) d.patterns = last.patterns;
  return d;
}

// ---- editing: every change of the edited state ends in record() ----------------

const LABELS = {
  strip: 'painting on the layer strip', mode: 'recompute mode', full: 'full_recompute_layer', sel: 'select_module', exc: 'exclude_op',
  cm: 'recompute_comm', comm: 'recompute_comm', ls: 'layer_swap', os: 'op_swap', swap: 'swap', par: 'parallel settings',
};
function labelOf(key) {
  const head = String(key || '').split('/')[0];
  return LABELS[head] || 'plan edit';
}

let recordTimer = null;
// Typing and dragging are recorded once they pause.
function recordSoon(label, ms = 700) {
  clearTimeout(recordTimer);
  recordTimer = setTimeout(() => { recordTimer = null; record(label); }, ms);
}
function recordNow(label) {
  clearTimeout(recordTimer);
  recordTimer = null;
  record(label);
}
function flushRecord() {
  if (recordTimer || unrecorded()) recordNow('edit');
}

// The YAML panel's text with the plan `cfg` in its three sections: only
// the keys that differ are rewritten, every other line (a training YAML's
// run, comments) stays. A text that is not YAML cannot be edited in place:
// the plan is written anew (Undo has the old text).
function textWith(cfg) {
  return store.textIsYaml ? editConfigText(store.yaml, JSON.parse(store.cfgSynced), cfg) : emitYaml(cfg).text;
}

// The controls changed store.cfg: only the keys they own are rewritten.
function controlsChanged(key, settled) {
  if (migrationFirst()) return;
  store.planFresh = false;
  store.yaml = textWith(store.cfg);
  store.textIsYaml = true;
  store.cfgSynced = JSON.stringify(store.cfg);
  setYamlBox(store.yaml);
  if (settled) recordNow(labelOf(key));
  else recordSoon(labelOf(key));
  schedule();
}

// A graph-mode file's plan is its recompute_config: an edit of the
// sections would be a plan the run ignores, so the controls ask for the
// migration first and put the edit back.
function migrationFirst() {
  const m = store.migrate;
  if (!m || !m.data || !m.data.yaml) return false;
  store.cfg = JSON.parse(store.cfgSynced);
  renderControls();
  renderStripNow();
  const text = 'This graph-mode file\'s plan is its recompute_config, which the run applies and the recompute sections do not change: migrate it first (the button above), then edit.';
  $('migrate-status').textContent = text;
  announce(text);
  $('migrate-accept')?.focus();
  return true;
}

function planCtx() {
  return {
    state: store,
    layout: () => store.layout,
    change: (how, key) => {
      controlsChanged(key, how === 'commit');
      if (how === 'pattern') paintPreviews($('plan'), null, null);
    },
    rebuild: (focusKey) => {
      controlsChanged(focusKey, true);
      renderControls(focusKey);
    },
  };
}

function renderControls(focusKey) {
  const key = focusKey || (document.activeElement && document.activeElement.dataset && document.activeElement.dataset.key);
  if (!store.model.obj) {
    $('plan').replaceChildren(el('p', { class: 'note', role: 'note', text: 'The plan controls need the model (the layers they place): upload it, or edit the YAML panel meanwhile.' }));
    return;
  }
  renderPlan($('plan'), planCtx());
  paintPreviews($('plan'), store.layout, store.analysis);
  paintFlags($('plan'), store.analysis);
  paintModelFlags();
  if (key) {
    const n = document.querySelector(`[data-key="${CSS.escape(key)}"]`);
    if (n) n.focus();
  }
}

function renderParallelNow(focusKey) {
  renderParallel($('parallel'), {
    state: store,
    goToLine: goToYamlLine,
    modelChanged: (key) => {
      renderParallelNow(key);
      recordNow(labelOf(key));
      schedule();
    },
  });
  paintModelFlags();
  if (focusKey) document.querySelector(`[data-key="${CSS.escape(focusKey)}"]`)?.focus();
}

// Findings about the model's settings (pipeline stages with swap, ...)
// are marked on the field that causes them.
function paintModelFlags() {
  for (const n of document.querySelectorAll('#parallel .flag-error, #parallel .flag-warning')) n.classList.remove('flag-error', 'flag-warning');
  for (const n of document.querySelectorAll('#parallel .field-flag')) n.remove();
  for (const n of document.querySelectorAll('#parallel [data-flagged]')) {
    n.removeAttribute('aria-invalid');
    n.setAttribute('aria-describedby', n.dataset.flagged === '-' ? '' : n.dataset.flagged);
    if (!n.getAttribute('aria-describedby')) n.removeAttribute('aria-describedby');
    delete n.dataset.flagged;
  }
  if (!store.analysis) return;
  const seen = new Set();
  for (const e of store.analysis.modelHits || []) {
    const input = document.querySelector(`#parallel [data-key="par/${e.field}"]`);
    if (!input || seen.has(`${e.field}|${e.d.message}`)) continue;
    seen.add(`${e.field}|${e.d.message}`);
    const field = input.closest('.field, .check') || input.parentNode;
    field.classList.add(`flag-${e.severity}`);
    const id = uid('pflag');
    field.append(el('p', { class: `flag ${e.severity} field-flag`, id },
      el('span', { class: 'sev', text: e.severity === 'error' ? '⚠' : '!' }), ` ${e.d.message}`));
    if (input.dataset.flagged === undefined) input.dataset.flagged = input.getAttribute('aria-describedby') || '-';
    if (e.severity === 'error') input.setAttribute('aria-invalid', 'true');
    input.setAttribute('aria-describedby', `${input.getAttribute('aria-describedby') || ''} ${id}`.trim());
  }
}

function renderMapNow() {
  if (!store.model.obj) {
    $('map-wrap').replaceChildren(el('p', { class: 'note', text: `No layer map without a model. ${store.model.needed || ''}` }));
    return;
  }
  const r = store.result;
  const plan = r && r.valid && r.layers && sameLayers() ? r.layers : null;
  const est = store.estimate;
  renderMap($('map-wrap'), {
    cfg: store.cfg, layout: store.layout, plan: store.planFresh ? plan : null, analysis: store.analysis,
    memory: est && est.ok && est.data && est.data.layers && store.planFresh ? est.data.layers : null,
    onDetail: (l) => {
      store.detailLayer = l;
      renderDetailNow(true);
      const r = store.result;
      if (r && r.valid && r.layers && r.layers[l] && !r.layers[l].paths) refresh().then(() => renderDetailNow(true));
    },
  });
}

function renderStripNow() {
  const r = store.result;
  const plan = r && r.valid && r.layers && sameLayers() && store.planFresh ? r.layers : null;
  renderStrip($('strip'), {
    cfg: store.cfg, layout: store.layout, plan, analysis: store.analysis,
    proposal: store.fit.proposal && store.fit.proposal.cfg,
    paint: (label, key) => {
      controlsChanged(key, true);
      renderControls();
      renderStripNow();
    },
  });
}

function sameLayers() {
  return store.layout && store.result.layers.length === store.layout.layer_types.length;
}

function renderDetailNow(focus) {
  const r = store.result;
  const plan = r && r.valid && store.planFresh ? r.layers : null;
  const head = store.layout ? renderDetail($('layer-detail'), store.detailLayer, store.layout, plan) : null;
  if (focus && head) head.focus();
}

function hideConfirm() {
  store.exportConfirmed = false;
  $('export-confirm').hidden = true;
}

function renderResults() {
  store.planFresh = !!(store.result && store.result.valid);
  renderDiags();
  renderYamlErrors();
  paintPreviews($('plan'), store.layout, store.analysis);
  paintFlags($('plan'), store.analysis);
  paintModelFlags();
  renderMapNow();
  renderStripNow();
  if (store.detailLayer !== null) renderDetailNow(false);
  renderMemoryNow();
  if (!renderExport()) hideConfirm();
  renderFitNow();
  renderVariantsNow();
  renderDiffNow();
  renderLedgerNow();
  renderSteplogNow();
  $('model-summary').textContent = store.layout ? modelSummary(store.model.obj, store.layout) : '';
}

// The unmodelled findings of the config, the model import and the estimate.
function leftOut() {
  const r = store.result;
  const all = r ? [...(r.warnings || []), ...extraWarnings(r)] : [];
  return all.filter((d) => d.code === 'unmodelled');
}

function renderMemoryNow() {
  renderMemory($('memory'), {
    estimate: store.estimate, lastGood: store.lastGoodEstimate, model: store.model.obj, ui: store.ui, needed: store.model.needed, neededCode: store.model.neededCode,
    leftOut: leftOut(), assumed: store.model.assumed,
    valid: !!(store.result && store.result.valid),
    focusDevices: () => document.querySelector('[data-key="par/world_size"]')?.focus(),
    uiChanged: () => {
      renderMemoryNow();
      saveShare();
      if (store.ui.tab === 'timeline' && !hasTimeline(store.estimate)) refresh();
    },
  });
}

function renderModelLabel() {
  const t = store.training;
  const model = store.model.obj ? `Model: ${store.model.label}` : `Model: none (${store.model.neededCode || 'model-needed'})`;
  const file = t ? (t.ownModel && store.model.source === t.name ? ' (from the training YAML)' : ` · training YAML ${t.name}`) : '';
  $('model-label').textContent = `${model}${file}`;
  $('preset').value = store.model.preset || '';
  $('yaml-note').textContent = t
    ? `The whole of ${t.name}, as the server reads it: the controls edit its recompute, recompute_comm and swap sections in place; the download is the server's export of it.`
    : 'The three sections; edit here or with the controls.';
}

// ---- the YAML box: its text is the config; undo is the page's, never the browser's --

// Selects line n of the YAML panel (a value the training YAML gives).
function goToYamlLine(n) {
  const ta = $('yaml-text');
  const lines = ta.value.split('\n');
  const start = lines.slice(0, n - 1).reduce((a, l) => a + l.length + 1, 0);
  ta.focus();
  ta.setSelectionRange(start, start + (lines[n - 1] || '').length);
  const lh = parseFloat(getComputedStyle(ta).lineHeight) || 18;
  ta.scrollTop = Math.max(0, (n - 4) * lh);
}

function setYamlBox(text) {
  const ta = $('yaml-text');
  if (ta.value !== text) ta.value = text;
  renderGutter();
}

// Typing is one history step per burst; a paste, a cut, a drop or a
// replacement is a step of its own.
function burstEnds(e) {
  return !['insertText', 'insertLineBreak', 'deleteContentBackward', 'deleteContentForward'].includes(e.inputType)
    || (e.data && e.data.length > 1);
}

function onYamlBeforeInput(e) {
  if (e.inputType === 'historyUndo' || e.inputType === 'historyRedo') return;
  if (burstEnds(e) && recordTimer) recordNow('typing in the YAML');
}

let yamlTimer = null;
function onYamlInput(e) {
  store.yaml = $('yaml-text').value;
  store.planFresh = false;
  hooks.busy = true;
  if (burstEnds(e)) recordNow(e.inputType === 'insertFromPaste' || (e.data && e.data.length > 1) ? 'paste into the YAML' : 'edit of the YAML');
  else recordSoon('typing in the YAML');
  renderGutter();
  clearTimeout(yamlTimer);
  yamlTimer = setTimeout(() => { yamlTimer = null; applyYamlText(); }, 300);
}

// Reads the controls' form of the text from the server's parse.
function adoptSections(lay) {
  store.textIsYaml = !!lay.data.sections;
  if (!lay.data.sections) return false;
  const { cfg, problems } = fromSections(lay.data.sections);
  store.cfg = cfg;
  store.cfgProblems = problems;
  store.cfgSynced = JSON.stringify(cfg);
  return true;
}

// Parses the text through the API; when it is YAML, the controls follow it.
async function applyYamlText() {
  hooks.busy = true;
  const text = store.yaml;
  // without a model there is no layout to read (the server answers model-needed)
  const lay = store.model.obj ? await api.layout(req()) : { ok: false };
  if (text !== store.yaml) return;
  if (lay.ok) {
    store.layout = mergeLayout(lay.data);
    store.layoutKey = '';
    if (adoptSections(lay)) {
      store.layoutKey = patternKey();
      renderControls();
    }
  }
  await refresh();
}

// Ctrl+Z / Ctrl+Shift+Z / Ctrl+Y and the browser's own undo (context menu,
// beforeinput historyUndo) all go to the page's history: the browser's
// undo stack of a text field knows nothing of the controls' rewrites.
function wireUndo() {
  // fields outside the edited state (the planner's budget) keep their own undo
  const own = (e) => e.target && e.target.closest && e.target.closest('.own-undo');
  document.addEventListener('keydown', (e) => {
    if (!(e.ctrlKey || e.metaKey) || e.altKey || own(e)) return;
    const k = e.key.toLowerCase();
    if (k === 'z' && !e.shiftKey) { e.preventDefault(); doUndo(); } else if ((k === 'z' && e.shiftKey) || k === 'y') { e.preventDefault(); doRedo(); }
  }, true);
  document.addEventListener('beforeinput', (e) => {
    if (own(e)) return;
    if (e.inputType === 'historyUndo') { e.preventDefault(); doUndo(); } else if (e.inputType === 'historyRedo') { e.preventDefault(); doRedo(); }
  }, true);
  $('undo').addEventListener('click', doUndo);
  $('redo').addEventListener('click', doRedo);
  onHistory(renderHistory);
}

function renderHistory() {
  const h = historyState();
  $('undo').disabled = !h.canUndo;
  $('redo').disabled = !h.canRedo;
  $('undo').title = h.canUndo ? `Undo ${h.undoLabel} (Ctrl+Z)` : 'Nothing to undo';
  $('redo').title = h.canRedo ? `Redo ${h.redoLabel} (Ctrl+Shift+Z)` : 'Nothing to redo';
}

let applying = Promise.resolve();
function doUndo() {
  flushRecord();
  const label = undo();
  if (label) applying = applying.then(() => applyHistory(`Undid ${label}`));
  return applying;
}
function doRedo() {
  flushRecord();
  const label = redo();
  if (label) applying = applying.then(() => applyHistory(`Redid ${label}`));
  return applying;
}

// The store holds a state from the history: show it.
async function applyHistory(message) {
  hooks.busy = true;
  clearTimeout(yamlTimer);
  setYamlBox(store.yaml);
  renderModelLabel();
  renderParallelNow(); // its inputs hold the model object, which the history replaced
  announce(message);
  flash($('history-status'), message);
  await applyYamlText();
}

// ---- fit to budget: the planner the user steers ------------------------------------

// ---- Size the job: a layout applied --------------------------------------------------------

// The layout's model file (its parallel and training keys) and its config
// (the three sections, or the whole training YAML rewritten): one step of
// the history. Resolves to null, or what went wrong.
async function applyLayout(l, name) {
  const imp = await api.importYaml(l.model);
  if (!imp.ok) return `The layout's model could not be read: ${problemText(imp)}`;
  if (!imp.data.model) return `The layout's model has errors: ${(imp.data.errors[0] || {}).message}`;
  flushRecord();
  store.model = { ...store.model, obj: imp.data.model };
  store.yaml = l.config;
  store.planFresh = false;
  setYamlBox(store.yaml);
  recordNow(`apply of ${name}`);
  renderParallelNow();
  await applyYamlText();
  return null;
}

// ---- saved variants ---------------------------------------------------------------------------

let variants = loadVariants();

function currentEstimate() {
  const e = store.estimate;
  return e && e.ok && e.data && e.data.stages && store.result && store.result.valid ? e.data : null;
}

function renderVariantsNow() {
  renderVariants($('variants'), {
    variants,
    current: variantOf('Now', store, currentEstimate()),
    save: (name) => {
      const v = variantOf(name || `Variant ${variants.length + 1}`, store, currentEstimate());
      const status = $('variant-status');
      if (!v.figures) {
        status.textContent = 'Nothing to save: this plan has no estimate (fix its errors first).';
        return;
      }
      variants = [...variants.filter((x) => x.name !== v.name), v].slice(-8);
      keepVariants(variants);
      renderVariantsNow();
      $('variant-status').textContent = `Saved ${v.name}.`;
      announce(`Saved ${v.name}`);
    },
    load: async (i) => {
      const v = variants[i];
      if (!v) return;
      flushRecord();
      store.yaml = v.yaml;
      // the run it was priced on comes back with the text (one Undo step)
      const run = v.run && v.run.model && v.run.model.obj ? JSON.parse(JSON.stringify(v.run)) : null;
      if (run) {
        if (JSON.stringify(run.model.obj) !== JSON.stringify(store.model.obj)) {
          store.lastGoodEstimate = null; // figures of another model are no figures of this one
          store.fit.proposal = null;
        }
        store.model = run.model;
        store.training = run.training || null;
        renderModelLabel();
        renderParallelNow();
      }
      setYamlBox(store.yaml);
      recordNow(`Load ${v.name}`);
      await applyYamlText();
      $('variant-status').textContent = run
        ? `Loaded ${v.name}: its plan on the model ${v.model} and the layout it was saved with (${v.layout}).`
        : `Loaded ${v.name}'s plan, priced with the model on show (it was saved without its model${v.model ? `, ${v.model}` : ''}).`;
    },
    remove: (i) => {
      const v = variants[i];
      variants = variants.filter((_, k) => k !== i);
      keepVariants(variants);
      renderVariantsNow();
      if (v) $('variant-status').textContent = `Removed ${v.name}.`;
    },
  });
}

function renderFitNow() {
  renderFit($('fit-panel'), {
    state: store,
    run: fitToBudget,
    accept: acceptProposal,
    discard: () => { store.fit.proposal = null; renderFitNow(); renderDiffNow(); renderStripNow(); announce('Proposal discarded'); },
  });
}

async function fitToBudget() {
  const f = store.fit;
  const status = $('fit-status');
  hooks.busy = true;
  f.proposal = null;
  status.textContent = 'Planning…';
  const request = planRequest(store);
  if (request.error) {
    status.textContent = request.error;
    hooks.busy = false;
    return;
  }
  const r = await api.plan(request.body);
  if (!r.ok) {
    status.textContent = `The planner refused: ${problemText(r)}`;
    hooks.busy = false;
    return;
  }
  const d = r.data;
  if (!d.valid) {
    const n = (d.errors || []).length;
    status.textContent = `Your plan has ${n} error${n === 1 ? '' : 's'}: fix ${n === 1 ? 'it' : 'them'} or choose "Start fresh".`;
    hooks.busy = false;
    return;
  }
  const lay = await api.layout({ config: d.config, model: requestModel(store.model) });
  const proposed = lay.ok && lay.data.sections ? fromSections(lay.data.sections).cfg : null;
  f.proposal = {
    config: d.config, cfg: proposed, fits: d.fits, budget: d.budget_bytes, peak: d.estimate.peak_bytes,
    overhead: d.overhead_percent, start: request.start, allow: request.allow,
    current: currentFigures(),
  };
  status.textContent = describeProposal(store.cfg, f.proposal);
  announce(status.textContent);
  store.ui.diffBase = 'proposal';
  renderFitNow();
  renderDiffNow();
  renderStripNow();
  await weighProposal(f.proposal);
  hooks.busy = false;
}

// Why the proposal: each section it changes, applied alone to the current
// plan, estimated: the peak it saves and the step time it costs.
async function weighProposal(p) {
  const cur = store.estimate && store.estimate.ok && store.estimate.data && store.estimate.data.stages ? store.estimate.data : null;
  if (!p.cfg) return;
  const why = {};
  for (const g of changedSections(store.cfg, p.cfg)) {
    if (!g.section) continue;
    if (!cur) {
      why[g.section] = { error: 'your plan has no estimate of its own' };
      continue;
    }
    // the run on show with this one section changed (a pasted training
    // YAML keeps its run, as an uploaded one does)
    const config = textWith(withSection(store.cfg, p.cfg, g.section));
    const r = await api.estimate({ config, model: requestModel(store.model) });
    const d = r.ok ? r.data : null;
    if (!d || !d.stages || !d.stages.length) {
      why[g.section] = { error: d && d.errors && d.errors.length ? `alone it is invalid: ${d.errors[0].code}` : 'no estimate' };
      continue;
    }
    const step = (x) => (x.time && x.time.step_seconds) || (x.cost && x.cost.step_seconds) || 0;
    why[g.section] = {
      savedBytes: cur.peak_bytes - d.peak_bytes,
      costSeconds: step(d) - step(cur),
      costPercent: step(cur) ? ((step(d) - step(cur)) / step(cur)) * 100 : 0,
    };
  }
  if (store.fit.proposal !== p) return; // discarded or replaced meanwhile
  p.why = why;
  renderFitNow();
}

function currentFigures() {
  const e = store.estimate;
  if (!e || !e.ok || !e.data || !e.data.stages) return null;
  return { peak: e.data.peak_bytes, overhead: e.data.overhead_percent ?? 0, capacity: e.data.capacity_bytes };
}

async function acceptProposal() {
  const p = store.fit.proposal;
  if (!p || migrationFirst()) return;
  flushRecord();
  // a whole training YAML (uploaded or pasted) keeps every other line: the
  // proposal's sections go in place; the planner answers the sections alone
  store.yaml = p.cfg && store.textIsYaml && carriesRun(store.yaml) ? textWith(p.cfg) : p.config;
  store.fit.proposal = null;
  renderStripNow();
  setYamlBox(store.yaml);
  recordNow('Fit to budget');
  $('fit-status').textContent = `Loaded the planner's proposal (Undo brings your plan back).`;
  announce($('fit-status').textContent);
  renderFitNow();
  await applyYamlText();
}

// ---- migrate a graph-mode recompute_config ------------------------------------------

function renderMigrateNow() {
  renderMigrate($('migrate'), store.migrate, acceptMigrate);
}

// Asks /migrate once per text that has a top-level recompute_config.
async function checkMigrate() {
  const src = migrateSource(store);
  const key = src ? `${src.where}\n${src.text}` : '';
  if ((store.migrate ? store.migrate.key : '') === key) return;
  store.migrate = src ? { key, where: src.where, data: null } : null;
  renderMigrateNow();
  if (!src) return;
  $('migrate-status').textContent = '';
  const r = await api.migrate({ config: src.text });
  if (!store.migrate || store.migrate.key !== key) return;
  store.migrate.data = r.ok ? r.data : { valid: false, error: problemText(r) };
  renderMigrateNow();
}

// Replaces the text with the migrated file: one step of the history.
async function acceptMigrate() {
  const m = store.migrate;
  if (!m || !m.data || !m.data.yaml) return;
  flushRecord();
  store.yaml = m.data.yaml;
  setYamlBox(store.yaml);
  recordNow('migration of recompute_config');
  $('migrate-status').textContent = migratedText(droppedKeys(m.data));
  announce($('migrate-status').textContent);
  await applyYamlText();
}

// ---- the diff view --------------------------------------------------------------------

function renderDiffNow() {
  renderDiff($('diff'), {
    current: store.yaml,
    bases: {
      upload: store.baselines.upload,
      export: store.baselines.export,
      proposal: store.fit.proposal ? store.fit.proposal.config : null,
    },
    base: store.ui.diffBase,
    pick: (b) => { store.ui.diffBase = b; renderDiffNow(); },
  });
}

// ---- model: presets and uploads ----------------------------------------------------------

async function loadPreset(name) {
  const r = await api.preset(name);
  if (!r.ok) {
    uploadStatus('error', `Preset ${name}: ${problemText(r)}`);
    return;
  }
  flushRecord();
  store.model = { label: name, preset: name, obj: r.data, importWarnings: [] };
  store.lastGoodEstimate = null; // figures of another model are no figures of this one
  store.fit.proposal = null;
  renderModelLabel();
  renderParallelNow();
  recordNow(`model ${name}`);
  await refresh({ layout: true });
  renderControls();
  announce(`Model ${name} loaded`);
}

async function upload(file) {
  if (!file) return;
  if (file.size > 1024 * 1024) {
    uploadStatus('error', `${file.name} is ${Math.round(file.size / 1024)} KiB: the limit is 1 MiB.`);
    return;
  }
  uploadStatus('info', `Reading ${file.name}…`);
  const text = await file.text();
  if (!(await adoptUpload(file.name, text))) return;
  flushRecord();
  store.lastGoodEstimate = null; // figures of another model are no figures of this one
  store.fit.proposal = null;
  setYamlBox(store.yaml);
  renderModelLabel();
  renderParallelNow();
  renderControls();
  recordNow(`upload of ${file.name}`);
  await applyYamlText();
  announce(`${file.name} loaded`);
}

// ---- measured against estimated: a memory trace ---------------------------------------

function renderLedgerNow() {
  const lg = store.ledger;
  const box = $('ledger');
  renderLedger(box, lg, !!(lg && lg.data && lg.key !== requestKey()));
  box.dataset.state = lg ? lg.state : 'none';
}

// The estimate's stage the comparison is made with (its timeline is the
// estimated curve), when the estimate is of the same model and config.
function comparedStage(data) {
  const est = store.estimate;
  if (!data.compare || !est || !est.ok || !est.data || !est.data.stages) return null;
  return est.data.stages.find((x) => x.stage === data.compare.stage) || null;
}

// Sends store.ledger's trace with the current model and config.
async function compareTrace() {
  const lg = store.ledger;
  if (!lg || lg.text === undefined) return;
  await refresh(); // the estimate of this model and config (the estimated curve)
  if (store.ledger !== lg) return;
  const stageText = $('ledger-stage').value.trim();
  const stage = stageText === '' ? null : Number(stageText);
  const key = requestKey();
  const body = JSON.stringify(ledgerRequest(lg.text, store.model, store.yaml, stage));
  const size = new TextEncoder().encode(body).length;
  Object.assign(lg, { state: 'sending', sent: 0, total: size, problem: null });
  if (size > LEDGER_MAX_BODY) {
    Object.assign(lg, { state: 'error', problem: { title: 'too large', detail: `with its JSON escapes, the model and the config the request is ${Math.ceil(size / 1024)} KiB: the server takes at most ${LEDGER_MAX_BODY / 1024} KiB. Run \`memopt ledger ${lg.name}\` on the command line for a trace this large.` } });
    renderLedgerNow();
    return;
  }
  renderLedgerNow();
  const r = await postLedger(body, (sent, total) => {
    if (store.ledger !== lg) return;
    lg.sent = sent;
    lg.total = total || size;
    renderLedgerNow();
  });
  if (store.ledger !== lg) return; // another trace was picked meanwhile
  lg.key = key;
  if (r.ok) {
    Object.assign(lg, { state: 'done', data: r.data, estStage: comparedStage(r.data) });
    announce(`${lg.name}: measured peak ${mib(r.data.peak.bytes)}${r.data.compare ? `, estimated ${mib(r.data.compare.estimate_peak_bytes)}` : ''}`);
  } else {
    const p = r.problem || { title: `HTTP ${r.status}` };
    if (r.status === 413) p.detail = `the request is larger than this server's body limit (memopt serve --max-body): run \`memopt ledger ${lg.name}\` on the command line instead.`;
    Object.assign(lg, { state: 'error', data: null, problem: p });
    announce(`${lg.name} was refused`);
  }
  renderLedgerNow();
}

async function loadTrace(file) {
  if (!file) return;
  const tooBig = traceSizeProblem(file.name, file.size);
  store.ledger = { name: file.name, size: file.size, state: tooBig ? 'error' : 'reading', problem: tooBig ? { title: 'too large', detail: tooBig } : null };
  renderLedgerNow();
  if (tooBig) return;
  const lg = store.ledger;
  try {
    lg.text = await file.text();
  } catch (err) {
    Object.assign(lg, { state: 'error', problem: { title: `${file.name} cannot be read: ${err.message}` } });
    renderLedgerNow();
    return;
  }
  await compareTrace();
}

function wireLedger() {
  $('trace-file').addEventListener('change', (e) => loadTrace(e.target.files[0]));
  const drop = $('trace-drop');
  drop.addEventListener('dragover', (e) => { e.preventDefault(); drop.classList.add('over'); });
  drop.addEventListener('dragleave', () => drop.classList.remove('over'));
  drop.addEventListener('drop', (e) => {
    e.preventDefault();
    drop.classList.remove('over');
    loadTrace(e.dataTransfer.files[0]);
  });
  $('ledger-stage').addEventListener('change', () => compareTrace());
  $('ledger').addEventListener('click', (e) => { if (e.target.id === 'ledger-again') compareTrace(); });
}

// ---- measured step time: a training log -------------------------------------------------

function renderSteplogNow() {
  const sl = store.steplog;
  const box = $('steplog');
  renderSteplog(box, sl, !!(sl && sl.data && sl.key !== requestKey()));
  box.dataset.state = sl ? sl.state : 'none';
}

let steplogFile = null; // {name, text}: the log opened last (its name while the text is its)

function steplogFailed(name, text, title) {
  store.steplog = { name, text, state: 'error', problem: { title } };
  renderSteplogNow();
  announce(title);
}

// Sends the log in the text field with the current model and config.
async function compareLog() {
  const text = $('steplog-text').value;
  const name = steplogFile && steplogFile.text === text ? steplogFile.name : 'the pasted log';
  if (!/\S/.test(text)) {
    steplogFailed(name, text, 'There is no log: open a training log or paste its lines above.');
    return;
  }
  if (!store.model.obj) {
    steplogFailed(name, text, `The modelled step time needs the model: ${store.model.needed || 'pick a preset or upload a model file'}`);
    return;
  }
  const body = JSON.stringify(calibrateRequest(text, store.model, store.yaml));
  const size = new TextEncoder().encode(body).length;
  if (size > STEPLOG_MAX_BODY) {
    steplogFailed(name, text, logSizeProblem(name, size));
    return;
  }
  const sl = { name, text, state: 'sending' };
  store.steplog = sl;
  renderSteplogNow();
  const key = requestKey();
  const r = await api.calibrate(body);
  if (store.steplog !== sl) return; // another log was sent meanwhile
  sl.key = key;
  if (r.ok && r.data && r.data.runs && r.data.runs[0]) {
    Object.assign(sl, { state: 'done', data: r.data });
    const run = r.data.runs[0];
    announce(`${name}: measured step ${stepTime(run.measured_seconds)}, modelled ${stepTime(run.estimated_before)}`);
  } else {
    const p = r.problem || { title: `HTTP ${r.status}` };
    if (r.status === 413) p.detail = 'the log is larger than this server takes: keep the lines of fewer steps.';
    else if (!/invalid-log|limit|model-needed/.test(p.type || '')) p.detail = problemText(r);
    Object.assign(sl, { state: 'error', data: null, problem: p });
    announce(`${name} was refused`);
  }
  renderSteplogNow();
}

async function openLog(file) {
  if (!file) return;
  const tooBig = logSizeProblem(file.name, file.size);
  if (tooBig) {
    steplogFailed(file.name, '', tooBig);
    return;
  }
  let text;
  try {
    text = await file.text();
  } catch (err) {
    steplogFailed(file.name, '', `${file.name} cannot be read: ${err.message}`);
    return;
  }
  steplogFile = { name: file.name, text };
  $('steplog-text').value = text;
  await compareLog();
}

function wireSteplog() {
  $('steplog-file').addEventListener('change', (e) => openLog(e.target.files[0]));
  const drop = $('steplog-drop');
  drop.addEventListener('dragover', (e) => { e.preventDefault(); drop.classList.add('over'); });
  drop.addEventListener('dragleave', () => drop.classList.remove('over'));
  drop.addEventListener('drop', (e) => {
    e.preventDefault();
    drop.classList.remove('over');
    openLog(e.dataTransfer.files[0]);
  });
  $('steplog-send').addEventListener('click', () => compareLog());
  $('steplog').addEventListener('click', (e) => { if (e.target.id === 'steplog-again') compareLog(); });
}

// ---- export, copy, share --------------------------------------------------------------

function flash(node, text) {
  node.textContent = text;
  clearTimeout(node.flashTimer);
  node.flashTimer = setTimeout(() => { node.textContent = ''; }, 8000);
}

// The text the server checks and exports: the YAML panel (a whole
// training YAML, or the three sections).
function exportText() {
  return store.yaml;
}

async function doExport() {
  const status = $('export-status');
  if (outOfMemory(store.estimate).length && !store.exportConfirmed) {
    $('export-confirm').hidden = false;
    $('export-anyway').focus();
    return;
  }
  hideConfirm();
  if (store.offline) {
    downloadLastValid(status);
    return;
  }
  const config = exportText();
  // the server's export of the checked text, comments inside the sections kept
  const r = await api.exportConfig({ config, model: requestModel(store.model), form: 'as-written' });
  if (!r.ok || !r.data.valid || typeof r.data.yaml !== 'string') {
    flash(status, `Export failed: ${r.ok ? (r.data.errors[0] || {}).message : problemText(r)}`);
    return;
  }
  const name = store.training ? store.training.name : 'memopt.yaml';
  const yaml = r.data.yaml;
  const blob = new Blob([yaml.endsWith('\n') ? yaml : `${yaml}\n`], { type: 'application/yaml' });
  const a = el('a', { href: URL.createObjectURL(blob), download: name });
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(a.href), 10000);
  // a training YAML priced with the parallel fields edited comes back with
  // them in its own keys (the server writes them; the panel keeps its text)
  const layout = yaml !== config;
  store.baselines.export = yaml;
  renderDiffNow();
  flash(status, `✓ Downloaded ${name} (checked by the server: valid)${layout ? ', with the parallel and batch settings on show written in its keys' : ''}.`);
  announce(`${name} downloaded`);
}

// The server is away: the last text it checked valid is still the user's
// to keep (the page never writes YAML itself).
function downloadLastValid(status) {
  const last = store.lastValid;
  if (!last) {
    flash(status, 'The server does not answer and has not checked any text valid yet: nothing to download.');
    return;
  }
  const blob = new Blob([last.yaml.endsWith('\n') ? last.yaml : `${last.yaml}\n`], { type: 'application/yaml' });
  const a = el('a', { href: URL.createObjectURL(blob), download: last.name });
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(a.href), 10000);
  flash(status, `✓ Downloaded ${last.name}: the last text the server checked valid${last.yaml === store.yaml ? '' : ' (your edits since are not in it)'}.`);
  announce(`${last.name} downloaded`);
}

function shareObject() {
  return {
    v: 1, model: store.model, training: store.training, yaml: store.yaml,
    ui: { tab: store.ui.tab, stage: store.ui.stage, detail: store.detailLayer },
  };
}

let shareTimer = null;
function saveShare() {
  if (store.keepHash) return;
  clearTimeout(shareTimer);
  shareTimer = setTimeout(async () => {
    const hash = await encodeShare(shareObject());
    if (hash !== location.hash) history.replaceState(null, '', hash);
  }, 150);
}

// true: restored; false: no share link; 'broken': a link that cannot be read.
async function restore(hash) {
  if (!hash || hash === '#') return false;
  let s;
  try {
    s = await decodeShare(hash);
  } catch {
    s = null;
  }
  if (!s || s.v !== 1 || !s.model || (!s.model.obj && !s.model.needed)) return 'broken';
  store.model = s.model;
  store.training = s.training ? { name: s.training.name, ownModel: s.training.ownModel !== false } : null;
  store.yaml = typeof s.yaml === 'string' ? s.yaml : DEFAULT_YAML;
  store.ui.tab = (s.ui && s.ui.tab) || 'stages';
  store.ui.stage = (s.ui && s.ui.stage) || 0;
  store.detailLayer = s.ui && Number.isInteger(s.ui.detail) ? s.ui.detail : null;
  return true;
}

function brokenLink() {
  store.notice = {
    kind: 'error',
    text: 'The share link in the address bar could not be read (it is cut or damaged): the default model is shown instead. The link stays in the address bar until you change something.',
  };
  store.keepHash = true;
  onHistory(() => { if (historyState().depth > 0) store.keepHash = false; });
  renderNotice();
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
  onRetry(retryNow);
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
  const ta = $('yaml-text');
  ta.addEventListener('beforeinput', onYamlBeforeInput);
  ta.addEventListener('input', onYamlInput);
  ta.addEventListener('scroll', () => { $('yaml-gutter').scrollTop = ta.scrollTop; });
  $('export').addEventListener('click', doExport);
  $('export-anyway').addEventListener('click', () => { store.exportConfirmed = true; doExport(); });
  $('export-cancel').addEventListener('click', () => { hideConfirm(); $('export').focus(); });
  $('copy').addEventListener('click', () => copyText(exportText(), 'YAML', $('copy-status')));
  $('share').addEventListener('click', async () => {
    store.keepHash = false;
    history.replaceState(null, '', await encodeShare(shareObject()));
    await copyText(location.href, 'share link', $('share-status'));
  });
  wireUndo();
  wireTips();
  wireLedger();
  wireSteplog();
  renderLegend($('map-legend'));
  window.addEventListener('hashchange', async () => {
    if (store.keepHash) return;
    const ok = await restore(location.hash);
    if (ok === true) await start(false);
  });
}

async function start(first) {
  hooks.ready = false;
  renderModelLabel();
  setYamlBox(store.yaml);
  renderParallelNow();
  // the controls follow the text (the same path as editing the YAML)
  const lay = await api.layout(req());
  if (lay.ok) {
    store.layout = lay.data;
    adoptSections(lay);
    store.layoutKey = patternKey();
  }
  renderControls();
  resetHistory();
  await refresh();
  hooks.ready = true;
  if (first) document.documentElement.classList.add('ready');
}

async function main() {
  wire();
  mountSize($('size-panel'), () => requestModel(store.model), (body) => api.size(body), {
    base: () => store.yaml, apply: applyLayout, // a training YAML there is sent as the base
  });
  const pr = await api.presets();
  const sel = $('preset');
  sel.append(el('option', { value: '', text: '(uploaded model)' }));
  for (const p of (pr.ok ? pr.data.presets : [])) sel.append(el('option', { value: p.name, text: `${p.name} — ${p.description}` }));
  devices.list = pr.ok && Array.isArray(pr.data.devices) ? pr.data.devices : [];
  const restored = await restore(location.hash);
  if (restored !== true) {
    const r = await api.preset(DEFAULT_PRESET);
    store.model = { label: DEFAULT_PRESET, preset: DEFAULT_PRESET, obj: r.data, importWarnings: [] };
    if (restored === 'broken') brokenLink();
  }
  await start(true);
}

main();
