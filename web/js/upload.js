// Uploads: a model file (memopt YAML or JSON, a Hugging Face config.json)
// or a whole training YAML, read through the API into the store; errors
// are shown inline with their line and column.
import { api, problemText } from './api.js';
import { el, clear } from './util.js';
import { topKeys } from './state.js';
import { store, DEFAULT_YAML } from './store.js';
import { sectionsOf } from './edit.js';

const $ = (id) => document.getElementById(id);

export function uploadStatus(kind, text, diags = [], source = '') {
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

// Reads an uploaded file into the store; false (and says why) when it is not usable.
export async function adoptUpload(name, text) {
  const json = /\.json$/i.test(name) || /^\s*[{[]/.test(text);
  if (json) {
    const r = await api.importJson(text);
    if (!r.ok) {
      const p = r.problem || {};
      uploadStatus('error', `${name} is not a model: ${p.detail || p.title}`, p.line ? [{ line: p.line, column: p.column, message: p.detail || p.title, code: 'json' }] : [], text);
      return false;
    }
    if (r.data.errors && r.data.errors.length) {
      uploadStatus('error', `${name} has errors:`, r.data.errors, text);
      return false;
    }
    store.model = { label: name, preset: null, obj: r.data.model };
    store.training = null;
    uploadStatus('ok', `Loaded the model from ${name}.`, [], text);
    return true;
  }
  const lay = await api.layout({ config: text, model: store.model.obj });
  const syntax = lay.ok ? (lay.data.errors || []).filter((d) => d.code === 'yaml-syntax') : [];
  if (!lay.ok || syntax.length) {
    uploadStatus('error', `${name} is not YAML:`, syntax.length ? syntax : [{ message: problemText(lay) }], text);
    return false;
  }
  const imp = await api.importYaml(text);
  const noModel = imp.status === 422 && imp.problem && /no-model/.test(imp.problem.type || '');
  if (imp.ok) {
    if (imp.data.errors && imp.data.errors.length) {
      uploadStatus('error', `${name} has errors in its model:`, imp.data.errors, text);
      return false;
    }
    store.model = { label: name, preset: null, obj: imp.data.model };
    const isTraining = [...topKeys(text)].some((k) => !['model', 'training', 'parallel', 'device'].includes(k));
    store.training = isTraining ? { name, text, lines: lay.data.section_lines || {} } : null;
    if (isTraining) {
      // the sections as the file writes them, comments included
      store.yaml = sectionsOf(text, lay.data.section_lines) || DEFAULT_YAML;
      store.baselines.upload = store.yaml;
    }
    uploadStatus('ok', isTraining ? `Loaded ${name}: its model and its three sections; the export keeps every other line.` : `Loaded the model from ${name}.`, [], text);
    return true;
  }
  if (noModel) {
    store.yaml = text;
    store.baselines.upload = text;
    uploadStatus('ok', `${name} has no model: loaded its sections into the YAML panel.`, [], text);
    return true;
  }
  uploadStatus('error', `${name}: ${problemText(imp)}`);
  return false;
}

