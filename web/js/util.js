// Small DOM and formatting helpers shared by the UI modules.

// el('div', {class: 'x', text: 'hi', on: {click: fn}}, child...) builds an
// element. Attributes go through setAttribute (no inline styles: the
// server's CSP forbids them; positions are set through the CSSOM).
export function el(tag, attrs = {}, ...children) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (v === undefined || v === null || v === false) continue;
    if (k === 'class') e.className = v;
    else if (k === 'text') e.textContent = v;
    else if (k === 'on') for (const [ev, fn] of Object.entries(v)) e.addEventListener(ev, fn);
    else if (k === 'dataset') Object.assign(e.dataset, v);
    else if (k === 'value') e.value = v;
    else if (k === 'checked') e.checked = !!v;
    else e.setAttribute(k, v === true ? '' : String(v));
  }
  for (const c of children.flat()) {
    if (c === null || c === undefined || c === false) continue;
    e.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
  return e;
}

const SVGNS = 'http://www.w3.org/2000/svg';
export function svg(tag, attrs = {}, ...children) {
  const e = document.createElementNS(SVGNS, tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (v === undefined || v === null) continue;
    if (k === 'class') e.setAttribute('class', v);
    else if (k === 'text') e.textContent = v;
    else e.setAttribute(k, String(v));
  }
  for (const c of children.flat()) if (c) e.append(c);
  return e;
}

export function clear(node) {
  while (node.firstChild) node.firstChild.remove();
  return node;
}

let idSeq = 0;
export function uid(prefix = 'u') {
  idSeq += 1;
  return `${prefix}-${idSeq}`;
}

export function debounce(fn, ms) {
  let t = null;
  const d = (...args) => {
    clearTimeout(t);
    t = setTimeout(() => { t = null; fn(...args); }, ms);
  };
  d.flush = (...args) => { clearTimeout(t); t = null; fn(...args); };
  return d;
}

const UNITS = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
export function bytes(n) {
  if (n === null || n === undefined || Number.isNaN(n)) return '—';
  let v = Number(n);
  let u = 0;
  while (Math.abs(v) >= 1024 && u < UNITS.length - 1) { v /= 1024; u += 1; }
  return `${v.toFixed(u === 0 ? 0 : v < 10 ? 2 : 1)} ${UNITS[u]}`;
}

export function gib(n) {
  return `${(Number(n) / 2 ** 30).toFixed(2)} GiB`;
}

export function pct(x, digits = 1) {
  return `${Number(x).toFixed(digits)} %`;
}

// "0-3, 8, 10-12" for a list of [lo, hi] pairs.
export function rangesText(ranges) {
  return ranges.map(([a, b]) => (a === b ? `${a}` : `${a}-${b}`)).join(', ');
}

// Layer ids named by text such as "1, 4-7" (the core's range text).
export function parseRangesText(text) {
  const ids = [];
  for (const part of text.split(',')) {
    const m = /^\s*(\d+)(?:\s*-\s*(\d+))?\s*$/.exec(part);
    if (!m) continue;
    const a = Number(m[1]);
    const b = m[2] === undefined ? a : Number(m[2]);
    for (let i = a; i <= b && i - a < 100000; i += 1) ids.push(i);
  }
  return ids;
}

export function clamp(v, lo, hi) {
  return Math.min(hi, Math.max(lo, v));
}

// Announces text to screen readers through the page's live region.
export function announce(text) {
  const live = document.getElementById('live');
  if (!live) return;
  live.textContent = '';
  setTimeout(() => { live.textContent = text; }, 30);
}
