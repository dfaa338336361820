// Edits of the YAML text made by the controls (the text is the user's: a
// control touches nothing else): a control
// rewrites only the keys it changed (`mode`, `full_recompute_layer`,
// `select_module`, ...), in place, so the user's comments, key order and
// untouched keys (`swap: enable: False`) stay. The text is then checked by
// the server like any edit (libyaml parses it; the controls are re-read
// from its answer), so this module only has to find where a block key's
// lines are; whenever a section is not plain block style it falls back to
// rewriting that section whole (the previous text stays one Undo away).
import { emitYaml, quote, list } from './state.js';

const SECTIONS = {
  recompute: ['mode', 'full_recompute_layer', 'select_module', 'exclude_op'],
  recompute_comm: ['enable', 'select_module'],
  swap: ['enable', 'default_prefetch', 'layer_swap', 'op_swap'],
};

function patterns(entries) {
  return entries.map((e) => `    ${quote(e.pattern)}: ${list(e.ranges)}\n`).join('');
}

// The canonical lines of one key ('' when the key is absent), indented by
// two spaces as in a block section.
function keyText(cfg, section, key) {
  const r = cfg.recompute;
  const c = cfg.comm;
  const s = cfg.swap;
  switch (`${section}.${key}`) {
    case 'recompute.mode': return `  mode: ${r.mode}\n`;
    case 'recompute.full_recompute_layer':
      return r.full.length || r.mode === 'full' ? `  full_recompute_layer: ${list(r.full)}\n` : '';
    case 'recompute.select_module': return r.select.length ? `  select_module:\n${patterns(r.select)}` : '';
    case 'recompute.exclude_op': return r.exclude.length ? `  exclude_op:\n${patterns(r.exclude)}` : '';
    case 'recompute_comm.enable': return `  enable: ${c.enable ? 'True' : 'False'}\n`;
    case 'recompute_comm.select_module': return c.select.length ? `  select_module:\n${patterns(c.select)}` : '';
    case 'swap.enable': return `  enable: ${s.enable ? 'True' : 'False'}\n`;
    case 'swap.default_prefetch': return s.prefetch !== 1 ? `  default_prefetch: ${s.prefetch}\n` : '';
    case 'swap.layer_swap':
      return s.layerSwap.length ? `  layer_swap:\n${s.layerSwap.map((e) => `    - layers: ${list(e.ranges)}\n`).join('')}` : '';
    case 'swap.op_swap':
      return s.opSwap.length
        ? `  op_swap:\n${s.opSwap.map((e) => `    - op_name: ${quote(e.pattern)}\n      layers: ${list(e.ranges)}\n`).join('')}` : '';
    default: return '';
  }
}

const blankOrComment = (line) => /^\s*(#.*)?$/.test(line);
const indentOf = (line) => /^ */.exec(line)[0].length;

// Lines [start, end) of a block whose first line is `start`: up to the next
// line indented at most `indent` (blank and comment lines at its end belong
// to what follows).
function blockEnd(lines, start, indent, limit) {
  let end = start + 1;
  while (end < limit && (blankOrComment(lines[end]) || indentOf(lines[end]) > indent)) end += 1;
  while (end - 1 > start && blankOrComment(lines[end - 1])) end -= 1;
  return end;
}

// {start, end, block} of a top-level section key, or null; block is false
// for a section written in flow style or with an anchor, tag or alias.
function findSection(lines, name) {
  const re = new RegExp(`^${name}\\s*:(.*)$`);
  for (let i = 0; i < lines.length; i += 1) {
    const m = re.exec(lines[i]);
    if (!m) continue;
    const end = blockEnd(lines, i, 0, lines.length);
    return { start: i, end, block: /^\s*(#.*)?$/.test(m[1]) };
  }
  return null;
}

// The child keys of a block section: indent and each key's span.
function sectionKeys(lines, sec) {
  let indent = null;
  const keys = new Map();
  for (let i = sec.start + 1; i < sec.end; i += 1) {
    if (blankOrComment(lines[i])) continue;
    const n = indentOf(lines[i]);
    if (indent === null) indent = n;
    if (n !== indent) continue;
    const m = /^\s*([A-Za-z_]+)\s*:/.exec(lines[i]);
    if (!m) return null; // a quoted key, a sequence, ...: not plain block style
    if (keys.has(m[1])) return null; // duplicates: the server reports them
    keys.set(m[1], { start: i, end: blockEnd(lines, i, n, sec.end) });
  }
  return { indent: indent ?? 2, keys };
}

// ---- entries of a list a control rewrites (the user's comments between
// the entries of select_module, exclude_op, layer_swap, op_swap stay) ----

const ENTRY_LISTS = {
  'recompute.select_module': { get: (c) => c.recompute.select, kind: 'map' },
  'recompute.exclude_op': { get: (c) => c.recompute.exclude, kind: 'map' },
  'recompute_comm.select_module': { get: (c) => c.comm.select, kind: 'map' },
  'swap.layer_swap': { get: (c) => c.swap.layerSwap, kind: 'layers' },
  'swap.op_swap': { get: (c) => c.swap.opSwap, kind: 'op' },
};

// The lines [start, end) of each entry of a block key (a mapping's keys
// or a sequence's items, one indent deeper than the key), or null when the
// key holds its value on its own line (flow style) or is not laid out so.
function entrySpans(lines, span) {
  if (!/:\s*(#.*)?$/.test(lines[span.start])) return null;
  let indent = null;
  const out = [];
  for (let i = span.start + 1; i < span.end; i += 1) {
    if (blankOrComment(lines[i])) continue;
    const n = indentOf(lines[i]);
    if (indent === null) indent = n;
    if (n < indent) return null;
    if (n === indent) out.push({ start: i, end: blockEnd(lines, i, indent, span.end) });
  }
  return { indent, spans: out };
}

// A line `prefix value  # comment` with the value replaced (the comment kept);
// null when the line holds no value (a block list follows).
const KEY = String.raw`(?:'(?:[^']|'')*'|"(?:[^"\\]|\\.)*"|[^\s#'"][^#]*?)`;
function withValue(line, keyRe, value) {
  const m = new RegExp(`^(\\s*${keyRe}\\s*:\\s*)(\\[[^\\]#]*\\]|[^\\s#][^#]*?)(\\s+#.*)?$`).exec(line);
  return m ? `${m[1]}${value}${m[3] || ''}` : null;
}

function entryLines(kind, e, indent) {
  const pad = ' '.repeat(indent);
  if (kind === 'map') return [`${pad}${quote(e.pattern)}: ${list(e.ranges)}`];
  if (kind === 'layers') return [`${pad}- layers: ${list(e.ranges)}`];
  return [`${pad}- op_name: ${quote(e.pattern)}`, `${pad}  layers: ${list(e.ranges)}`];
}

// The edits of one entry: only the scalar that changed is rewritten.
function editEntry(lines, sp, kind, before, after, indent) {
  const whole = { at: sp.start, remove: sp.end - sp.start, add: entryLines(kind, after, indent) };
  const out = [];
  if (kind === 'map') {
    if (sp.end - sp.start !== 1) return [whole];
    const key = before.pattern === after.pattern ? KEY : null;
    const line = key ? withValue(lines[sp.start], key, list(after.ranges)) : null;
    if (line === null) {
      const m = /(\s+#.*)$/.exec(lines[sp.start]);
      return [{ at: sp.start, remove: 1, add: [`${entryLines(kind, after, indent)[0]}${m && /[\]'"]\s+#/.test(lines[sp.start]) ? m[1] : ''}`] }];
    }
    return [{ at: sp.start, remove: 1, add: [line] }];
  }
  const scalars = [['layers', list(after.ranges), JSON.stringify(before.ranges) !== JSON.stringify(after.ranges)]];
  if (kind === 'op') scalars.push(['op_name', quote(after.pattern), before.pattern !== after.pattern]);
  for (const [name, value, changed] of scalars) {
    if (!changed) continue;
    let done = false;
    for (let i = sp.start; i < sp.end && !done; i += 1) {
      const line = withValue(lines[i], `(?:-\\s+)?${name}`, value);
      if (line !== null) {
        out.push({ at: i, remove: 1, add: [line] });
        done = true;
      }
    }
    if (!done) return [whole];
  }
  return out;
}

// The edits that turn the entries `before` into `after` in place, or null
// (the key is then rewritten whole): the same entries with changed values,
// one entry removed, or one added at the end.
function editEntries(lines, span, kind, before, after) {
  const layout = entrySpans(lines, span);
  if (!layout || layout.spans.length !== before.length || !before.length) return null;
  const { indent, spans } = layout;
  const same = (a, b) => JSON.stringify(a) === JSON.stringify(b);
  if (after.length === before.length) {
    const out = [];
    before.forEach((b, i) => { if (!same(b, after[i])) out.push(...editEntry(lines, spans[i], kind, b, after[i], indent)); });
    return out;
  }
  if (after.length === before.length - 1) {
    let k = 0;
    while (k < after.length && same(before[k], after[k])) k += 1;
    if (!same(before.slice(k + 1), after.slice(k))) return null;
    return [{ at: spans[k].start, remove: spans[k].end - spans[k].start, add: [] }];
  }
  if (after.length === before.length + 1 && same(before, after.slice(0, -1))) {
    return [{ at: spans[spans.length - 1].end, remove: 0, add: entryLines(kind, after[after.length - 1], indent) }];
  }
  return null;
}

function reindent(text, indent) {
  if (indent === 2) return text;
  return text.replace(/^ {2}/gm, ' '.repeat(indent));
}

// A one-line scalar key keeps the comment at its end.
function keepComment(oldLine, newText) {
  const m = /^(\s*[A-Za-z_]+\s*:\s*[^'"#\s][^'"#]*?)(\s+#.*)$/.exec(oldLine);
  if (!m || newText.split('\n').length !== 2) return newText;
  return `${newText.replace(/\n$/, '')}${m[2]}\n`;
}

function toLines(text) {
  return text === '' ? [] : text.replace(/\n$/, '').split('\n');
}

// Rewrites one section of `lines` so that each key differing between
// `before` and `after` gets its new lines; false when the section must be
// rewritten whole.
function editSection(lines, name, before, after) {
  const sec = findSection(lines, name);
  const changed = SECTIONS[name].filter((k) => keyText(before, name, k) !== keyText(after, name, k));
  if (!changed.length) return true;
  if (!sec) {
    const text = emitYaml(after).sections[name];
    if (!text) return true;
    while (lines.length && lines[lines.length - 1] === '') lines.pop();
    lines.push(...toLines(text));
    return true;
  }
  if (!sec.block) return false;
  const layout = sectionKeys(lines, sec);
  if (!layout) return false;
  // edit from the bottom up so the spans above stay valid
  const edits = [];
  for (const key of changed) {
    const text = reindent(keyText(after, name, key), layout.indent);
    const span = layout.keys.get(key);
    const entries = ENTRY_LISTS[`${name}.${key}`];
    const inPlace = span && entries && text
      ? editEntries(lines, span, entries.kind, entries.get(before), entries.get(after)) : null;
    if (inPlace) edits.push(...inPlace);
    else if (span) {
      const next = span.end - span.start === 1 ? keepComment(lines[span.start], text) : text;
      edits.push({ at: span.start, remove: span.end - span.start, add: toLines(next) });
    } else if (text) {
      // after the last present key that comes before it in the seed's order
      const order = SECTIONS[name];
      let at = sec.start + 1;
      for (const k of order.slice(0, order.indexOf(key))) if (layout.keys.has(k)) at = layout.keys.get(k).end;
      edits.push({ at, remove: 0, add: toLines(text) });
    }
  }
  edits.sort((a, b) => b.at - a.at);
  for (const e of edits) lines.splice(e.at, e.remove, ...e.add);
  return true;
}

function replaceSection(lines, name, after) {
  const sec = findSection(lines, name);
  const text = toLines(emitYaml(after).sections[name]);
  if (sec) lines.splice(sec.start, sec.end - sec.start, ...text);
  else lines.push(...text);
}

// The text with the keys that differ between the configs `before` (what
// `text` says) and `after` (what the controls now say) rewritten.
export function editConfigText(text, before, after) {
  const lines = text.split('\n');
  const trailing = lines.length && lines[lines.length - 1] === '' ? lines.pop() : null;
  for (const name of Object.keys(SECTIONS)) {
    if (!editSection(lines, name, before, after)) replaceSection(lines, name, after);
  }
  let out = lines.join('\n');
  if (trailing !== null || !out.endsWith('\n')) out += '\n';
  if (!/\S/.test(out)) return emitYaml(after).text;
  return out;
}
