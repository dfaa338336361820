// Uploads: a model file (memopt YAML or JSON, a Hugging Face config.json)
// or a whole training YAML, read through the API into the store the way
// the CLI reads files: a training YAML goes to the API whole (the YAML
// panel holds the whole file, so a graph-mode recompute_config is priced
// and every finding has the file's own line), its model is the one the
// file names, and a file that names none leaves the page without a model
// (model-needed) rather than pricing the last one shown.
import { api, problemText } from './api.js';
import { el, clear } from './util.js';
import { topKeys } from './state.js';
import { store } from './store.js';
import { requestModel } from './model.js';

const $ = (id) => document.getElementById(id);
const MODEL_KEYS = ['model', 'training', 'parallel', 'device'];
const SECTION_KEYS = ['recompute', 'recompute_comm', 'swap'];

export function uploadStatus(kind, text, diags = [], source = '') {
  const box = clear($('upload-status'));
  if (!text) return;
  const sev = { error: '⚠ error', warning: '! warning', needed: '⚠ model-needed' }[kind] || '✓';
  box.append(el('p', { class: `flag ${kind === 'needed' ? 'warning' : kind}`, role: kind === 'error' ? 'alert' : null },
    el('span', { class: 'sev', text: sev }), ` ${text}`));
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

// What to upload for a training YAML that names no model: its
// pretrained_model_dir's config.json when it has one.
export function modelNeededText(name, text) {
  const m = /^pretrained_model_dir[ \t]*:[ \t]*["']?([^"'#\n]*?)["']?[ \t]*(#.*)?$/m.exec(text);
  const dir = m && m[1].trim();
  return dir
    ? `${name} names no model architecture: the run reads it from pretrained_model_dir (${dir}). Upload ${dir.replace(/\/$/, '')}/config.json, or pick a preset to price the file as that model.`
    : `${name} names no model architecture (no layer count, no known model_type). Upload its model (a config.json or a memopt model file), or pick a preset to price the file as that model.`;
}

function isTrainingText(text) {
  return [...topKeys(text)].some((k) => !MODEL_KEYS.includes(k) && !SECTION_KEYS.includes(k));
}

function warningsNote(n) {
  return n ? ` The import has ${n} warning${n === 1 ? '' : 's'}: see Findings.` : '';
}

async function adoptJson(name, text) {
  const r = await api.importJson(text);
  if (!r.ok) {
    const p = r.problem || {};
    const why = String(p.detail || p.title);
    uploadStatus('error', `${name} is not a model: ${why}`, p.line ? [{ line: p.line, column: p.column, message: why, code: 'json' }] : [], text);
    return false;
  }
  if (r.data.errors && r.data.errors.length) {
    uploadStatus('error', `${name} has errors:`, r.data.errors, text);
    return false;
  }
  const warnings = r.data.warnings || [];
  // the YAML panel keeps its text (a training YAML is priced with this model)
  const forFile = store.training ? store.training.name : null;
  store.model = { label: name, preset: null, obj: r.data.model, importWarnings: warnings, source: name, assumed: r.data.assumed || [] };
  uploadStatus('ok', `Loaded the model from ${name}${forFile ? ` for ${forFile}` : ''}.${warningsNote(warnings.length)}`, [], text);
  return true;
}

// Reads an uploaded file into the store; false (and says why) when it is not usable.
export async function adoptUpload(name, text) {
  if (!/\S/.test(text)) {
    uploadStatus('error', `${name} is empty: nothing to read.`);
    return false;
  }
  if (/\.json$/i.test(name) || /^\s*[{[]/.test(text)) return adoptJson(name, text);
  // a model only to read the text's syntax: any will do, the preset when none is on show
  const lay = await api.layout({ config: text, model: requestModel(store.model) || 'llama2-7b' });
  const syntax = lay.ok ? (lay.data.errors || []).filter((d) => d.code === 'yaml-syntax') : [];
  if (!lay.ok || syntax.length) {
    uploadStatus('error', `${name} is not YAML:`, syntax.length ? syntax : [{ message: problemText(lay) }], text);
    return false;
  }
  const training = isTrainingText(text);
  const imp = await api.importYaml(text);
  const noModel = imp.status === 422 && imp.problem && /no-model/.test(imp.problem.type || '');
  if (imp.ok) {
    if (imp.data.errors && imp.data.errors.length) {
      uploadStatus('error', `${name} has errors in its model:`, imp.data.errors, text);
      if (!training) return false;
      // the CLI reads such a file whole and prices nothing: so does the page
      // (its findings come from the server, at the file's lines); the model
      // shown before is not this file's
      store.training = { name, ownModel: false };
      store.yaml = text;
      store.baselines.upload = text;
      store.model = {
        label: null, preset: null, obj: null, neededCode: 'model errors', importWarnings: [],
        needed: `${name} has errors in its model (see Findings): fix them in the file and upload it again, or pick a preset to price the file as that model.`,
      };
      return true;
    }
    const warnings = imp.data.warnings || [];
    store.model = { label: name, preset: null, obj: imp.data.model, importWarnings: warnings, source: name, assumed: imp.data.assumed || [] };
    if (!training) {
      store.training = null;
      uploadStatus('ok', `Loaded the model from ${name}.${warningsNote(warnings.length)}`, [], text);
      return true;
    }
    store.training = { name, ownModel: true };
    store.yaml = text;
    store.baselines.upload = text;
    uploadStatus('ok', `Loaded ${name} whole: its model, its parallel settings and its plan, priced as the file says; the export is the file with your edits.${warningsNote(warnings.length)}`, [], text);
    return true;
  }
  if (!noModel) {
    uploadStatus('error', `${name}: ${problemText(imp, { fileBody: true })}`);
    return false;
  }
  store.yaml = text;
  store.baselines.upload = text;
  if (!training) {
    uploadStatus('ok', `${name} has no model: loaded its sections into the YAML panel, priced with the model shown.`, [], text);
    return true;
  }
  // a training YAML whose model is elsewhere: no model is priced until one is given
  store.training = { name, ownModel: false };
  store.model = { label: null, preset: null, obj: null, needed: modelNeededText(name, text), importWarnings: [] };
  uploadStatus('needed', store.model.needed, [], text);
  return true;
}
