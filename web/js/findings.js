// The findings panel, the YAML panel's error list and line-number gutter,
// the export button's reason and the page notice: renderers that read the
// store (store.js) and write only the DOM.
import { el, clear, gib } from './util.js';
import { store } from './store.js';
import { howToGive } from './api.js';
import { outOfMemory } from './memory.js';
import { where, targetKey, targetLabel } from './diags.js';

const $ = (id) => document.getElementById(id);

function diagItem(sev, d, gotoAction) {
  const fromModel = d.file === 'model';
  return el('li', { class: `diag ${sev}`, dataset: { code: d.code } },
    el('span', { class: 'sev', text: sev === 'error' ? '⚠ error' : '! warning' }),
    el('code', { class: 'code', text: d.code }), ' ',
    el('span', { class: 'msg', text: d.message }), ' ',
    gotoAction || (d.from ? el('span', { class: 'where', text: `(${d.from}${d.line ? `, line ${d.line}` : ''})` })
      : fromModel ? el('span', { class: 'where', text: `(model${d.line ? ` line ${d.line}` : ''})` })
      : d.line ? el('button', {
        type: 'button', class: 'link', text: where(d), 'aria-label': `Show ${where(d)} in the YAML`,
        on: { click: () => gotoLine(d.line, d.column) },
      }) : null),
    d.hint ? el('span', { class: 'hint', text: ` — ${d.hint}` }) : null,
    howToGive(d) ? el('span', { class: 'hint how', text: ` — ${howToGive(d)}` }) : null,
    markedAt(d));
}

// Where the finding is marked on the controls (a button that goes there),
// or why no control shows it.
function markedAt(d) {
  const e = store.analysis && store.analysis.entryOf && store.analysis.entryOf.get(d);
  if (!e) return null;
  const targets = [...e.targets];
  if (e.field) targets.push({ t: 'field', key: e.field });
  if (!targets.length) {
    return e.reason ? el('span', { class: 'no-control', text: ` Not on a control: ${e.reason}.` }) : null;
  }
  const seen = new Set();
  const uniq = targets.filter((t) => !seen.has(targetKey(t)) && seen.add(targetKey(t)));
  return el('span', { class: 'marked-at' }, ' Marked at ',
    ...uniq.flatMap((t, i) => [i ? ', ' : '', el('button', {
      type: 'button', class: 'link', text: targetLabel(t), dataset: { goto: targetKey(t) },
      on: { click: () => showControl(t) },
    })]));
}

function showControl(t) {
  const holder = t.t === 'field' ? document.querySelector(`#parallel [data-key="par/${CSS.escape(t.key)}"]`)
    : document.querySelector(`#plan [data-target="${CSS.escape(targetKey(t))}"]`);
  if (!holder) return;
  const n = holder.matches('input, select, [role="slider"]') ? holder
    : holder.querySelector('[data-flagged]:is(input, select, [role="slider"])') || holder.querySelector('input, select, [role="slider"]');
  if (n) n.focus();
  else {
    holder.setAttribute('tabindex', '-1');
    holder.focus();
  }
  holder.scrollIntoView({ block: 'nearest' });
}

// Warnings the check of the config does not repeat: the model import's
// (an uploaded file's unmodelled keys, graph mode) and the estimate's own.
export function extraWarnings(r) {
  const seen = new Set((r.warnings || []).map((d) => `${d.code}|${d.message}`));
  const out = [];
  const est = store.estimate;
  const sources = [
    [store.model.importWarnings || [], `model import of ${store.model.source || store.model.label}`],
    [est && est.ok && est.data ? est.data.warnings || [] : [], 'estimate'],
  ];
  for (const [list, from] of sources) {
    for (const d of list) {
      const k = `${d.code}|${d.message}`;
      if (seen.has(k)) continue;
      seen.add(k);
      out.push({ ...d, from });
    }
  }
  return out;
}

// main.js sets what "Retry now" does (the refresh lives there).
let retry = () => {};
export function onRetry(fn) {
  retry = fn;
}

export function renderDiags() {
  const box = clear($('diags'));
  const modelBox = clear($('model-diags'));
  const r = store.result;
  if (!store.model.obj && store.model.needed) {
    box.append(el('p', { class: 'flag warning', id: 'model-needed', role: 'note' },
      el('span', { class: 'sev', text: `⚠ ${store.model.neededCode || 'model-needed'}` }), ` ${store.model.needed}`));
  }
  if (store.offline) {
    box.append(el('div', { class: 'flag error offline', id: 'offline', role: 'alert' },
      el('span', { class: 'sev', text: '⚠ no server' }),
      ' The server does not answer (it stopped, or the network is down): the findings and figures below are from its last answer. The page asks again every few seconds. ',
      el('button', { type: 'button', id: 'retry', class: 'small', text: 'Retry now', on: { click: () => retry() } })));
  }
  if (store.problem) {
    box.append(el('p', { class: 'flag error', role: 'alert' }, el('span', { class: 'sev', text: '⚠ request refused' }), ` ${store.problem}`));
  }
  if (!r) return;
  const oom = r.valid ? outOfMemory(store.estimate) : [];
  const extra = extraWarnings(r);
  const nErr = (r.errors || []).length;
  const nWarn = (r.warnings || []).length + extra.length;
  const status = nErr ? `⚠ ${nErr} error${nErr === 1 ? '' : 's'}`
    : oom.length ? `⚠ valid, but out of memory on ${oom.length === 1 ? `stage ${oom[0].stage}` : `${oom.length} stages`}` : '✓ valid';
  box.append(el('p', { class: `diag-summary ${nErr || oom.length ? 'error' : 'ok'}`, id: 'diag-summary' },
    status, nWarn ? ` · ${nWarn} warning${nWarn === 1 ? '' : 's'}` : ''));
  const ul = el('ul', { class: 'diag-list' });
  const modelList = el('ul', { class: 'diag-list', 'aria-label': 'Findings about the model' });
  for (const s of oom) {
    ul.append(diagItem('error', {
      code: 'out-of-memory',
      message: `stage ${s.stage} (layers ${s.layers}) peaks at ${gib(s.peak)} at "${s.event}", over the device's ${gib(s.capacity)} by ${gib(s.peak - s.capacity)}`,
      hint: 'recompute or swap more layers, or use Fit to budget',
    }, el('button', {
      type: 'button', class: 'link', text: 'Show the memory', on: { click: () => $('peak-figure')?.focus() },
    })));
  }
  for (const [sev, d] of [...(r.errors || []).map((d) => ['error', d]), ...(r.warnings || []).map((d) => ['warning', d]),
    ...extra.map((d) => ['warning', d])]) {
    const li = diagItem(sev, d);
    ul.append(li);
    if (d.file === 'model') modelList.append(li.cloneNode(true));
  }
  box.append(ul);
  if (modelList.children.length) modelBox.append(modelList);
  keyboardScroll(ul, 'Findings');
}

// A list cut to its max-height scrolls: a keyboard user reaches it with
// Tab (its items may hold no link to stop on) and scrolls it with the arrows.
function keyboardScroll(list, label) {
  if (list.scrollHeight > list.clientHeight + 1) {
    list.setAttribute('tabindex', '0');
    if (!list.hasAttribute('aria-label')) list.setAttribute('aria-label', label);
  }
}

export function renderYamlErrors() {
  const box = clear($('yaml-errors'));
  const ta = $('yaml-text');
  const r = store.result;
  const list = r ? [...(r.errors || []), ...(r.warnings || [])].filter((d) => d.file !== 'model' && d.line) : [];
  const errs = r ? (r.errors || []).filter((d) => d.file !== 'model') : [];
  ta.setAttribute('aria-invalid', errs.length ? 'true' : 'false');
  for (const d of list) {
    const sev = (r.errors || []).includes(d) ? 'error' : 'warning';
    box.append(el('button', {
      type: 'button', class: `yerr ${sev}`, on: { click: () => gotoLine(d.line, d.column) },
    }, el('span', { class: 'sev', text: sev === 'error' ? '⚠' : '!' }), ` line ${d.line}:${d.column} `, el('code', { text: d.code }), ` ${d.message}`));
  }
  renderGutter();
}

// Line numbers beside the YAML text, with the lines that have findings marked.
export function renderGutter() {
  const g = $('yaml-gutter');
  const n = store.yaml.split('\n').length;
  const r = store.result;
  const marks = new Map();
  for (const [sev, arr] of [['warning', r ? r.warnings || [] : []], ['error', r ? r.errors || [] : []]]) {
    for (const d of arr) if (d.file !== 'model' && d.line) marks.set(d.line, sev);
  }
  const sig = `${n}|${[...marks].join(',')}`;
  if (g.dataset.sig !== sig) {
    g.dataset.sig = sig;
    clear(g);
    for (let i = 1; i <= n; i += 1) {
      const sev = marks.get(i);
      g.append(el('div', { class: sev ? `gl ${sev}` : 'gl', text: `${sev ? (sev === 'error' ? '⚠' : '!') : ''}${i}` }));
    }
  }
  g.scrollTop = $('yaml-text').scrollTop;
}

// Enables the download and says why not, or what it will do; false when
// nothing out of memory is left to confirm.
export function renderExport() {
  const btn = $('export');
  const reason = $('export-reason');
  const r = store.result;
  const errs = r ? r.errors || [] : [];
  let why = '';
  if (store.offline) {
    btn.disabled = !store.lastValid;
    reason.textContent = store.lastValid
      ? `The server does not answer: Download gives ${store.lastValid.name} as it last checked it valid${store.lastValid.yaml === store.yaml ? '' : ' (without your edits since)'}.`
      : 'The server does not answer and has checked nothing valid yet: nothing to download.';
    reason.className = 'export-reason blocked';
    return false;
  }
  if (store.problem) why = `Export is blocked: the server refused the request (${store.problem}).`;
  else if (!r) why = 'Export is blocked until the config has been checked.';
  else if (errs.length) {
    const d = errs[0];
    why = `Export is blocked by ${errs.length} error${errs.length === 1 ? '' : 's'}: ${d.message}${d.line && d.file !== 'model' ? ` (${where(d)})` : d.file === 'model' ? ' (model)' : ''}.`;
  }
  btn.disabled = !!why;
  const oom = !why ? outOfMemory(store.estimate) : [];
  const tail = store.training ? ` Downloads ${store.training.name} as the server checked it, your edits and comments included.` : '';
  if (why) reason.textContent = why;
  else if (oom.length) {
    reason.textContent = `Valid, but it runs out of memory: stage ${oom[0].stage} needs ${gib(oom[0].peak)} of ${gib(oom[0].capacity)}. Download asks you to confirm.${tail}`;
  } else {
    reason.textContent = `Ready: the config is valid and fits${r.warnings && r.warnings.length ? ` (${r.warnings.length} warning${r.warnings.length === 1 ? '' : 's'})` : ''}.${tail}`;
  }
  reason.className = `export-reason${why || oom.length ? ' blocked' : ''}`;
  return !!oom.length && !why;
}

export function renderNotice() {
  const box = clear($('notice'));
  box.hidden = !store.notice;
  if (!store.notice) return;
  box.append(el('p', { class: `flag ${store.notice.kind}` }, el('span', { class: 'sev', text: '⚠ ' }), store.notice.text, ' ',
    el('button', { type: 'button', class: 'small', text: 'Dismiss', on: { click: () => { store.notice = null; renderNotice(); } } })));
}

export function gotoLine(line, column = 1) {
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

