// The web UI's whole state, owned here (one owner, so no two views disagree): what the user
// edits (model, training YAML, config text and its structured form), what
// the server answered for it, the view settings, the planner's settings
// and proposal, and the editing history. Renderers read `store`; only the
// functions here and the controller in main.js write it.
import { emptyConfig } from './state.js';

export const DEFAULT_PRESET = 'llama2-7b';
export const DEFAULT_YAML = 'recompute:\n  mode: None\n';
export const MECHANISMS = ['select', 'full', 'exclude', 'comm', 'layer_swap', 'op_swap'];

export const store = {
  // edited by the user
  model: null,       // {label, preset, obj}: obj is the request's `model` (model-file keys)
  training: null,    // {name, text, lines}: an uploaded whole training YAML
  yaml: DEFAULT_YAML, // the config text the server checks (the YAML panel)
  cfg: emptyConfig(), // the controls' structured form of `yaml`
  cfgProblems: [],   // what the controls cannot show
  cfgSynced: JSON.stringify(emptyConfig()), // the cfg that `yaml` says (a control edit is compared with it)
  textIsYaml: true,  // the last parse of `yaml` was YAML (else the controls rewrite it whole)
  // answers of the server for the current text
  layout: null,      // POST /layout answer (types, layer_types, patterns)
  layoutKey: '',
  result: null,      // POST /expand answer (diagnostics and, when valid, layers)
  problem: null,     // a request the server refused (problem text)
  offline: false,    // the server did not answer the last request (the page retries)
  lastValid: null,   // {yaml, name}: the last text the server checked valid (downloadable while it is away)
  analysis: null,    // diags.analyze(result)
  estimate: null,    // POST /estimate answer ({ok, status, data, ...})
  lastGoodEstimate: null, // the last estimate with stages (kept while the config has errors)
  priced: null,      // the estimate answer's `run`: {model, from_config}, the model priced when a
                     // training YAML's run was read over the model given; null: the model as given
  planFresh: false,  // result.layers describe the current text
  estimatorMissing: false, // the server answered 501 for /estimate: do not ask again
  // view
  detailLayer: null,
  ui: { tab: 'stages', stage: 0, diffBase: 'upload' },
  notice: null,      // {kind, text}: a page-level notice (broken share link)
  keepHash: false,   // a broken share link stays in the address bar until the user edits
  exportConfirmed: false, // the user confirmed downloading a config that runs out of memory
  // the planner (Fit to budget)
  // budgetGiB and headroom are the two fields as typed; `from` says which
  // one the user set last (the other follows it and the device's capacity)
  fit: {
    budgetGiB: '', headroom: '', headroomUnit: '%', from: 'budget', allow: [...MECHANISMS], start: 'fresh', proposal: null,
  },
  // a measured memory trace and its comparison (POST /ledger): {name, size,
  // text, state: reading|sending|done|error, sent, total, key, data,
  // problem, estStage}; not part of the history or the share link
  ledger: null,
  // a training log and its step time against the model's (POST /calibrate):
  // {name, text, state: sending|done|error, key, data, problem}; not part
  // of the history or the share link
  steplog: null,
  // the offer to migrate a graph-mode recompute_config (POST /migrate):
  // {key, where: training|yaml, data}; data null while it is asked
  migrate: null,
  // texts the diff view compares against
  baselines: { upload: null, export: null },
};

// ---- editing history: undo / redo over the whole edited state ----------------

const LIMIT = 200;
const history = { past: [], present: null, future: [], listeners: [] };

function snapshot() {
  return JSON.stringify({ model: store.model, training: store.training, yaml: store.yaml });
}

export function onHistory(fn) {
  history.listeners.push(fn);
}

function notify() {
  for (const fn of history.listeners) fn();
}

// Starts a fresh history at the current state (first load, share link).
export function resetHistory() {
  history.past = [];
  history.future = [];
  history.present = { snap: snapshot(), label: 'start' };
  notify();
}

// Records the current state as one step (no-op when nothing changed).
export function record(label) {
  const snap = snapshot();
  if (history.present && history.present.snap === snap) return false;
  if (history.present) history.past.push(history.present);
  if (history.past.length > LIMIT) history.past.shift();
  history.present = { snap, label };
  history.future = [];
  notify();
  return true;
}

function apply(entry) {
  const s = JSON.parse(entry.snap);
  store.model = s.model;
  store.training = s.training;
  store.yaml = s.yaml;
}

// Moves one step back (the label of the step undone) or null.
export function undo() {
  if (!history.past.length) return null;
  const undone = history.present;
  history.future.push(undone);
  history.present = history.past.pop();
  apply(history.present);
  notify();
  return undone.label;
}

export function redo() {
  if (!history.future.length) return null;
  history.past.push(history.present);
  history.present = history.future.pop();
  apply(history.present);
  notify();
  return history.present.label;
}

export function historyState() {
  return {
    canUndo: history.past.length > 0,
    canRedo: history.future.length > 0,
    undoLabel: history.present ? history.present.label : '',
    redoLabel: history.future.length ? history.future[history.future.length - 1].label : '',
    depth: history.past.length,
  };
}

// Has the state moved since the last recorded step?
export function unrecorded() {
  return !!history.present && history.present.snap !== snapshot();
}
