// The configuration the controls edit, its YAML text both ways, and the
// share link (#hash). The YAML text is what the server validates; the
// controls are its structured form.

export function emptyConfig() {
  return {
    recompute: { mode: 'None', full: [], select: [], exclude: [] },
    comm: { enable: false, select: [] },
    swap: { enable: false, prefetch: 1, layerSwap: [], opSwap: [] },
  };
}

// ---- emitting YAML ----------------------------------------------------------

export function quote(s) {
  return `'${String(s).replace(/'/g, "''")}'`;
}

export function list(ranges) {
  return `[${ranges.map(([a, b]) => (a === b ? `${a}` : `${a}-${b}`)).join(', ')}]`;
}

function recomputeText(r) {
  if (r.mode === 'None' && !r.full.length && !r.select.length && !r.exclude.length) return '';
  let t = `recompute:\n  mode: ${r.mode}\n`;
  if (r.full.length || r.mode === 'full') t += `  full_recompute_layer: ${list(r.full)}\n`;
  if (r.select.length) {
    t += '  select_module:\n';
    for (const e of r.select) t += `    ${quote(e.pattern)}: ${list(e.ranges)}\n`;
  }
  if (r.exclude.length) {
    t += '  exclude_op:\n';
    for (const e of r.exclude) t += `    ${quote(e.pattern)}: ${list(e.ranges)}\n`;
  }
  return t;
}

function commText(c) {
  if (!c.enable && !c.select.length) return '';
  let t = `recompute_comm:\n  enable: ${c.enable ? 'True' : 'False'}\n`;
  if (c.select.length) {
    t += '  select_module:\n';
    for (const e of c.select) t += `    ${quote(e.pattern)}: ${list(e.ranges)}\n`;
  }
  return t;
}

function swapText(s) {
  if (!s.enable && !s.layerSwap.length && !s.opSwap.length && s.prefetch === 1) return '';
  let t = `swap:\n  enable: ${s.enable ? 'True' : 'False'}\n`;
  if (s.prefetch !== 1) t += `  default_prefetch: ${s.prefetch}\n`;
  if (s.layerSwap.length) {
    t += '  layer_swap:\n';
    for (const e of s.layerSwap) t += `    - layers: ${list(e.ranges)}\n`;
  }
  if (s.opSwap.length) {
    t += '  op_swap:\n';
    for (const e of s.opSwap) t += `    - op_name: ${quote(e.pattern)}\n      layers: ${list(e.ranges)}\n`;
  }
  return t;
}

// {text, sections: {recompute, recompute_comm, swap}} (absent sections '').
export function emitYaml(cfg) {
  const sections = {
    recompute: recomputeText(cfg.recompute),
    recompute_comm: commText(cfg.comm),
    swap: swapText(cfg.swap),
  };
  const text = sections.recompute + sections.recompute_comm + sections.swap;
  return { text: text || 'recompute:\n  mode: None\n', sections };
}

// Top-level keys of a YAML text (block style), to tell a model file
// (model/training/parallel/device) from a whole training YAML.
export function topKeys(text) {
  const keys = new Set();
  for (const m of text.matchAll(/^([A-Za-z_][\w.-]*)\s*:/gm)) keys.add(m[1]);
  return keys;
}

const PLAN_SECTIONS = ['recompute', 'recompute_comm', 'swap'];

// Does the text carry more than the plan's three sections (a whole
// training YAML, uploaded or pasted)? Its other keys (parallel_config,
// offsets, dtypes, a graph-mode recompute_config) are part of the run
// priced, so a text the page sends in its place keeps them.
export function carriesRun(text) {
  return [...topKeys(text)].some((k) => !PLAN_SECTIONS.includes(k));
}

// ---- reading the sections the server parsed -----------------------------------

function readRanges(v, where, problems) {
  if (!Array.isArray(v)) {
    problems.push(`${where} is not a list`);
    return [];
  }
  const out = [];
  for (const item of v) {
    if (Number.isInteger(item) && item >= 0) out.push([item, item]);
    else {
      const m = typeof item === 'string' ? /^\s*(\d+)\s*(?:-\s*(\d+))?\s*$/.exec(item) : null;
      if (m) out.push([Number(m[1]), Number(m[2] ?? m[1])]);
      else problems.push(`${where}: item ${JSON.stringify(item)}`);
    }
  }
  return out;
}

function readPatterns(v, where, problems) {
  if (v === undefined || v === null) return [];
  if (typeof v !== 'object' || Array.isArray(v)) {
    problems.push(`${where} is not a mapping`);
    return [];
  }
  return Object.entries(v).map(([pattern, layers]) => ({
    pattern, ranges: readRanges(layers, `${where}['${pattern}']`, problems),
  }));
}

function readBool(v, where, problems) {
  if (v === undefined || v === null) return false;
  if (typeof v === 'boolean') return v;
  problems.push(`${where} is not True/False`);
  return false;
}

// cfg from the layout endpoint's `sections`, and what the controls cannot
// show (the YAML keeps it; the diagnostics explain it).
export function fromSections(sections) {
  const cfg = emptyConfig();
  const problems = [];
  const r = sections.recompute;
  if (r && typeof r === 'object' && !Array.isArray(r)) {
    const mode = r.mode === null || r.mode === undefined ? 'None' : r.mode;
    if (['None', 'full', 'select'].includes(mode)) cfg.recompute.mode = mode;
    else problems.push(`recompute.mode ${JSON.stringify(mode)}`);
    if (r.full_recompute_layer !== undefined && r.full_recompute_layer !== null) {
      cfg.recompute.full = readRanges(r.full_recompute_layer, 'full_recompute_layer', problems);
    }
    cfg.recompute.select = readPatterns(r.select_module, 'select_module', problems);
    cfg.recompute.exclude = readPatterns(r.exclude_op, 'exclude_op', problems);
  } else if (r !== undefined && r !== null) problems.push('recompute is not a mapping');
  const c = sections.recompute_comm;
  if (c && typeof c === 'object' && !Array.isArray(c)) {
    cfg.comm.enable = readBool(c.enable, 'recompute_comm.enable', problems);
    cfg.comm.select = readPatterns(c.select_module, 'recompute_comm.select_module', problems);
  } else if (c !== undefined && c !== null) problems.push('recompute_comm is not a mapping');
  const s = sections.swap;
  if (s && typeof s === 'object' && !Array.isArray(s)) {
    cfg.swap.enable = readBool(s.enable, 'swap.enable', problems);
    if (Number.isInteger(s.default_prefetch)) cfg.swap.prefetch = s.default_prefetch;
    else if (s.default_prefetch !== undefined) problems.push('swap.default_prefetch is not an integer');
    if (Array.isArray(s.layer_swap)) {
      s.layer_swap.forEach((e, i) => {
        cfg.swap.layerSwap.push({ ranges: readRanges(e && e.layers, `layer_swap[${i}].layers`, problems) });
      });
    } else if (s.layer_swap !== undefined && s.layer_swap !== null) problems.push('swap.layer_swap is not a list');
    if (Array.isArray(s.op_swap)) {
      s.op_swap.forEach((e, i) => {
        const pattern = e && typeof e.op_name === 'string' ? e.op_name : '';
        if (!pattern) problems.push(`op_swap[${i}].op_name`);
        cfg.swap.opSwap.push({ pattern, ranges: readRanges(e && e.layers, `op_swap[${i}].layers`, problems) });
      });
    } else if (s.op_swap !== undefined && s.op_swap !== null) problems.push('swap.op_swap is not a list');
  } else if (s !== undefined && s !== null) problems.push('swap is not a mapping');
  return { cfg, problems };
}

// ---- share link ------------------------------------------------------------------

async function pipe(bytes, stream) {
  const out = new Response(new Blob([bytes]).stream().pipeThrough(stream));
  return new Uint8Array(await out.arrayBuffer());
}

function toBase64url(u8) {
  let s = '';
  for (let i = 0; i < u8.length; i += 0x8000) s += String.fromCharCode(...u8.subarray(i, i + 0x8000));
  return btoa(s).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
}

function fromBase64url(text) {
  const b = atob(text.replace(/-/g, '+').replace(/_/g, '/'));
  const u8 = new Uint8Array(b.length);
  for (let i = 0; i < b.length; i += 1) u8[i] = b.charCodeAt(i);
  return u8;
}

// "#s=" + base64url(deflate-raw(JSON)).
export async function encodeShare(obj) {
  const raw = new TextEncoder().encode(JSON.stringify(obj));
  return `#s=${toBase64url(await pipe(raw, new CompressionStream('deflate-raw')))}`;
}

export async function decodeShare(hash) {
  const m = /^#s=([A-Za-z0-9_-]+)$/.exec(hash || '');
  if (!m) return null;
  const raw = await pipe(fromBase64url(m[1]), new DecompressionStream('deflate-raw'));
  return JSON.parse(new TextDecoder().decode(raw));
}
