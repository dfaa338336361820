// The diff view: the YAML text against the uploaded file, the last export
// or the planner's proposal, line by line (longest common subsequence;
// bounded so that a large text costs at most a few million steps).
import { el, clear } from './util.js';

const MAX_CELLS = 4e6;

// [{op: ' ' | '-' | '+', text}] turning `a` into `b`, or null when too large.
export function lineDiff(a, b) {
  const x = a.replace(/\n$/, '').split('\n');
  const y = b.replace(/\n$/, '').split('\n');
  // common head and tail first: most edits touch a few lines
  let head = 0;
  while (head < x.length && head < y.length && x[head] === y[head]) head += 1;
  let tail = 0;
  while (tail < x.length - head && tail < y.length - head && x[x.length - 1 - tail] === y[y.length - 1 - tail]) tail += 1;
  const xs = x.slice(head, x.length - tail);
  const ys = y.slice(head, y.length - tail);
  if ((xs.length + 1) * (ys.length + 1) > MAX_CELLS) return null;
  const w = ys.length + 1;
  const L = new Uint32Array((xs.length + 1) * w);
  for (let i = xs.length - 1; i >= 0; i -= 1) {
    for (let j = ys.length - 1; j >= 0; j -= 1) {
      L[i * w + j] = xs[i] === ys[j] ? L[(i + 1) * w + j + 1] + 1 : Math.max(L[(i + 1) * w + j], L[i * w + j + 1]);
    }
  }
  const out = x.slice(0, head).map((text) => ({ op: ' ', text }));
  let i = 0;
  let j = 0;
  while (i < xs.length || j < ys.length) {
    if (i < xs.length && j < ys.length && xs[i] === ys[j]) {
      out.push({ op: ' ', text: xs[i] });
      i += 1;
      j += 1;
    } else if (i < xs.length && (j === ys.length || L[(i + 1) * w + j] >= L[i * w + j + 1])) {
      out.push({ op: '-', text: xs[i] }); // removals first, as diff -u
      i += 1;
    } else {
      out.push({ op: '+', text: ys[j] });
      j += 1;
    }
  }
  for (const text of x.slice(x.length - tail)) out.push({ op: ' ', text });
  return out;
}

const NAMES = {
  upload: 'the uploaded file', export: 'the last export', proposal: "the planner's proposal",
};

// ctx: {current, bases: {upload, export, proposal}, base, pick(base)}
export function renderDiff(root, ctx) {
  const sig = JSON.stringify([ctx.current, ctx.bases, ctx.base]);
  if (root.dataset.sig === sig) return;
  root.dataset.sig = sig;
  const hadFocus = root.contains(document.activeElement) ? document.activeElement.id : null;
  clear(root);
  const selId = 'diff-base';
  const sel = el('select', { id: selId, on: { change: (e) => ctx.pick(e.target.value) } });
  for (const [k, name] of Object.entries(NAMES)) {
    sel.append(el('option', { value: k, text: `${name}${ctx.bases[k] === null || ctx.bases[k] === undefined ? ' (none yet)' : ''}`, selected: k === ctx.base }));
  }
  root.append(el('div', { class: 'field inline' }, el('label', { for: selId, text: 'Compare the YAML with' }), sel));
  const base = ctx.bases[ctx.base];
  if (base === null || base === undefined) {
    root.append(el('p', { class: 'note', text: `There is no ${NAMES[ctx.base].replace(/^the /, '')} to compare with yet.` }));
  } else {
    // the old side is the file or the export, or the YAML when the new
    // side is the proposal (what accepting it would change)
    const forward = ctx.base === 'proposal';
    const d = forward ? lineDiff(ctx.current, base) : lineDiff(base, ctx.current);
    const oldName = forward ? 'the YAML' : NAMES[ctx.base];
    const newName = forward ? NAMES[ctx.base] : 'the YAML';
    if (!d) root.append(el('p', { class: 'note', text: 'The texts are too large to compare here.' }));
    else if (d.every((l) => l.op === ' ')) root.append(el('p', { class: 'note', id: 'diff-same', text: `The YAML is the same as ${NAMES[ctx.base]}.` }));
    else {
      const added = d.filter((l) => l.op === '+').length;
      const removed = d.filter((l) => l.op === '-').length;
      root.append(el('p', { class: 'diff-count', text: `${removed} line${removed === 1 ? '' : 's'} only in ${oldName} (−), ${added} only in ${newName} (+)` }));
      const pre = el('pre', { class: 'diff', tabindex: 0, 'aria-label': `Differences from ${NAMES[ctx.base]}` });
      for (const l of d) {
        pre.append(el('span', { class: l.op === '+' ? 'dl add' : l.op === '-' ? 'dl del' : 'dl' }, `${l.op === ' ' ? ' ' : l.op === '+' ? '+' : '−'} ${l.text}\n`));
      }
      root.append(pre);
    }
  }
  if (hadFocus) document.getElementById(hadFocus)?.focus();
}
