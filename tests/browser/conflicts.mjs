// Every rule code memopt emits, marked on the control that causes it
// (a finding a user cannot locate cannot be fixed): one config per code, from the
// golden cases (tests/golden/invalid/<code>/<case>/config.yaml with the
// model file the case names), loaded into the page, and where the finding
// must show: which control (section, list, entry, range row, pattern
// input, parallel field) carries the visible flag, the message and
// aria-invalid (errors) or aria-describedby (warnings), which layers of
// the strip are marked; or, for a finding no control can show, the reason
// given beside it in the findings list. The expectations are written from
// reading each config (the path the rule is about), never from memopt's
// answer. The list of codes is checked against the golden folders and the
// codes the core's sources emit, so a new rule without a place fails here.
import { readFileSync, readdirSync } from 'node:fs';
import { join, basename } from 'node:path';

// case: golden case (invalid/<code>/<case>), or null with `config`/`setup`.
// at: [{holder, row?, pattern?}] data-target values of the holders that must
// be flagged (row: the range row's item index; pattern: the pattern input
// is the marked control); field: a parallel field's key; strip: {lane,
// layers}; reason: the words beside a finding without a control; pick: which
// of several findings of the code (by its message).
const CASES = [
  { code: 'comm-needs-modules', golden: 'comm-needs-modules/comm-without-modules', at: [{ holder: 'list:comm' }] },
  { code: 'duplicate-key', golden: 'duplicate-key/duplicate-pattern', at: [{ holder: 'select:.*mlp' }] },
  { code: 'exclude-no-effect', golden: 'exclude-no-effect/exclude-outside-recompute', at: [{ holder: 'exclude:.*add', row: 0 }] },
  { code: 'full-needs-layers', golden: 'full-needs-layers/full-without-layers', at: [{ holder: 'full' }] },
  { code: 'full-op-swap', golden: 'full-op-swap/full-op-swap', at: [{ holder: 'opSwap:0', row: 0 }, { holder: 'full', row: 0 }], strip: { lane: 'opSwap', layers: [2, 3] } },
  { code: 'layer-order', golden: 'layer-order/order-overlapping-ranges', at: [{ holder: 'layerSwap:0', row: 1 }], strip: { lane: 'layerSwap', layers: [2] } },
  { code: 'layer-range', golden: 'layer-range/range-layer-swap', at: [{ holder: 'layerSwap:0', row: 0 }] },
  { code: 'layer-spec', golden: 'layer-spec/spec-letters', at: [{ holder: 'opSwap:0' }] },
  { code: 'legacy-key', golden: 'legacy-key/legacy-swap-config', reason: /swap_config is not one of the three sections the controls edit/ },
  { code: 'missing-key', golden: 'missing-key/missing-layers-layer-swap', at: [{ holder: 'layerSwap:0' }] },
  { code: 'mode-invalid', golden: 'mode-invalid/mode-capitalised', at: [{ holder: 'mode' }] },
  { code: 'no-effect', golden: 'no-effect/full-mode-none', at: [{ holder: 'mode' }] },
  { code: 'no-effect', golden: 'no-effect/layer-swap-disabled', at: [{ holder: 'swapEnable' }] },
  { code: 'no-match', golden: 'no-match/no-match-leaf', at: [{ holder: 'select:linear_fc1', row: 0 }], strip: { lane: 'select:linear_fc1', layers: [0, 1, 2, 3] } },
  { code: 'op-recompute-swap', golden: 'op-recompute-swap/op-recompute-swap-same', at: [{ holder: 'opSwap:0', row: 0 }], strip: { lane: 'opSwap', layers: [3] } },
  // TP 3 on 16 heads: the golden case's model file (dense8-tp3.yaml) is refused at upload,
  // so its TP is set in the field of dense8.yaml
  { code: 'parallel', golden: 'parallel/parallel-tp-heads', model: 'models/dense8.yaml', setup: [['par/tensor_parallel', 3]], field: 'tensor_parallel', pick: /^tensor_parallel 3 does not divide/ },
  { code: 'prefetch-range', golden: 'prefetch-range/prefetch-last-layer', at: [{ holder: 'layerSwap:0', row: 0 }, { holder: 'prefetch' }], strip: { lane: 'layerSwap', layers: [7] } },
  { code: 'prefetch-range', golden: 'prefetch-range/prefetch-zero', at: [{ holder: 'prefetch' }] },
  { code: 'recompute-swap-layer', golden: 'recompute-swap-layer/recompute-swap-full', at: [{ holder: 'layerSwap:0', row: 0 }, { holder: 'full', row: 0 }], strip: { lane: 'layerSwap', layers: [2, 3] } },
  { code: 'redundant', golden: 'redundant/redundant-select', at: [{ holder: 'select:.*mlp', row: 0 }, { holder: 'full', row: 0 }] },
  { code: 'regex', golden: 'regex/regex-unclosed-paren', at: [{ holder: 'select:(.*mlp', pattern: true }] },
  { code: 'pattern-shape', golden: 'pattern-shape/pattern-shape-star-star', at: [{ holder: 'select:(.*)*mlp', pattern: true }] },
  { code: 'select-needs-modules', golden: 'select-needs-modules/select-without-modules', at: [{ holder: 'list:select' }] },
  { code: 'single-device', golden: 'single-device/single-device', field: 'world_size' },
  { code: 'swap-pipeline', golden: 'swap-pipeline/swap-with-pp', at: [{ holder: 'swapEnable' }], field: 'pipeline_parallel' },
  { code: 'type', golden: 'type/type-layer-swap-dict', at: [{ holder: 'list:layerSwap' }] },
  { code: 'type', golden: 'type/type-op-name-list', at: [{ holder: 'opSwap:0', pattern: true }] },
  { code: 'unknown-key', golden: 'unknown-key/unknown-key-swap', at: [{ holder: 'section:swap' }] },
  { code: 'unknown-key', golden: 'unknown-key/unknown-key-layer-swap-entry', at: [{ holder: 'layerSwap:0' }] },
  { code: 'yaml-syntax', golden: 'yaml-syntax/yaml-unclosed-flow', reason: /not YAML/ },
  // a model key memopt does not read (a share link carries the model object as it was)
  { code: 'unread-key', model: 'models/dense8.yaml', extraModelKey: 'foo_bar', config: 'recompute:\n  mode: None\n', reason: /model file's model\.foo_bar, which this page has no field for/ },
];

// Codes that no request of the page can produce, and why (each also covered by
// units.test.mjs through analyze()).
const NOT_FROM_THE_PAGE = {
  'model-needed': 'the page always sends a model',
  internal: 'an internal error of the core, no input causes it',
  unmodelled: 'a finding of the model import (context.mode, micro_batch_interleave_num): the page sends the imported model, without those keys',
  'no-equivalent': 'a finding of POST /api/v1/migrate, listed by the migrate offer (migrate.mjs)',
  unsupported: 'a finding of the model import (an entry point, layer flag or config class of a model memopt does not price): the page sends a model it imported',
  'model-replaced': 'a training YAML read over a model given apart that states no run of its own (a config.json on the command line): the page always sends a model object with its parallel settings',
  'megatron-script': 'a finding of a launch script\'s import (a command it does not run, a file it does not open: a MindSpeed-LLM FSDP2 launch\'s YAML): the page sends the imported model',
  'megatron-recompute': 'a finding of a launch\'s import (its recompute flags or FSDP2 parallel.recompute, which belong in the config): the page sends the imported model',
};

// The rule codes the core emits: the literals passed to diags_add /
// diags_add_at as the code, and to findings_add (the resolver's
// findings, reported later with their code).
function coreCodes(root) {
  const codes = new Set();
  const code = '"([a-z]+(?:-[a-z]+)*)"';
  const direct = new RegExp(`diags_add(?:_at)?\\s*\\(\\s*[^,()]+,\\s*(?:MO_SEV_\\w+|sev),\\s*(?:\\w+\\s*\\?\\s*${code}\\s*:\\s*)?${code}`, 'g');
  const found = new RegExp(`findings_add(?:_segment)?\\s*\\([^;]*?${code}`, 'g');
  const walk = (dir) => {
    for (const f of readdirSync(dir, { withFileTypes: true })) {
      const p = join(dir, f.name);
      if (f.isDirectory()) walk(p);
      else if (f.name.endsWith('.c')) {
        const text = readFileSync(p, 'utf8');
        for (const m of text.matchAll(direct)) for (const c of [m[1], m[2]]) if (c) codes.add(c);
        for (const m of text.matchAll(found)) codes.add(m[1]);
      }
    }
  };
  walk(join(root, 'core/src'));
  return codes;
}

// The model of the last case was changed in its fields or its object.
let modelTouched = false;

async function loadModel(page, t, file, extraKey) {
  const label = basename(file);
  const same = await page.evaluate((l) => window.memopt.state.model.label === l, label);
  if (same && !modelTouched && !extraKey) return;
  modelTouched = !!extraKey;
  await page.setInputFiles('#file', file);
  await page.waitForFunction((l) => window.memopt.state.model.label === l, label);
  await t.idle(page);
}

// The page as a share link with a model object holding a key memopt does not read.
async function withExtraModelKey(page, base, t, key, config) {
  const hash = await page.evaluate(async ([k, yaml]) => {
    const { encodeShare } = await import('/js/state.js');
    const s = window.memopt.share();
    s.model = { ...s.model, obj: { ...s.model.obj, model: { ...s.model.obj.model, [k]: 3 } } };
    s.yaml = yaml;
    return encodeShare(s);
  }, [key, config]);
  await page.goto('about:blank');
  await page.goto(`${base}${hash}`);
  await t.idle(page);
}

async function paste(page, t, text) {
  await page.locator('#yaml-text').focus();
  await page.keyboard.press('Control+A');
  await page.keyboard.insertText(text);
  await t.idle(page);
}

// The finding of `code` in the findings list: {sev, msg, noControl, marked}.
function findingOf(page, code, pick) {
  return page.evaluate(([c, p]) => {
    const li = [...document.querySelectorAll(`#diags li[data-code="${c}"]`)]
      .find((x) => !p || new RegExp(p).test(x.querySelector('.msg').textContent));
    if (!li) return null;
    return {
      sev: li.classList.contains('error') ? 'error' : 'warning',
      msg: li.querySelector('.msg').textContent,
      noControl: (li.querySelector('.no-control') || {}).textContent || '',
      marked: [...li.querySelectorAll('.marked-at button')].map((b) => b.dataset.goto),
    };
  }, [code, pick ? pick.source : null]);
}

// What a holder shows: its flag class, its messages, and its controls' states.
function holderState(page, target, row, pattern) {
  return page.evaluate(([tg, r, pat]) => {
    const sel = r === null ? `#plan [data-target="${CSS.escape(tg)}"]:not(.range-row)` : `#plan .range-row[data-target="${CSS.escape(tg)}"][data-item="${r}"]`;
    const h = document.querySelector(sel);
    if (!h) return null;
    const own = pat ? [h.querySelector('input.pattern')]
      : [...h.querySelectorAll('input:not(.pattern), select, [role="slider"], .rangelist')].filter((n) => n.closest('[data-target]') === h);
    const controls = own.length ? own : [h];
    const described = (n) => (n.getAttribute('aria-describedby') || '').split(/\s+/).filter(Boolean)
      .map((id) => document.getElementById(id)).filter(Boolean).map((x) => x.textContent).join(' ');
    const box = h.querySelector(r === null ? ':scope > .entry-flags' : '.range-flags');
    return {
      cls: h.className,
      flags: box ? box.textContent : '',
      visible: box ? box.getBoundingClientRect().height > 0 && getComputedStyle(box).display !== 'none' : false,
      controls: controls.map((n) => ({ invalid: n.getAttribute('aria-invalid'), described: described(n) })),
    };
  }, [target, row === undefined ? null : row, !!pattern]);
}

export async function conflictScenarios(page, base, t) {
  const { check, ROOT } = t;
  const golden = join(ROOT, 'tests/golden');
  t.setStep('every rule code has a place');
  const covered = new Set(CASES.map((c) => c.code));
  const folders = readdirSync(join(golden, 'invalid')).filter((f) => f !== 'several-rules' && !f.endsWith('.md'));
  for (const f of folders) check(covered.has(f) || NOT_FROM_THE_PAGE[f], `the golden rule folder ${f} has no case here`);
  const emitted = coreCodes(ROOT);
  check(emitted.size >= 25, `the core's codes were read: ${[...emitted].join(', ')}`);
  for (const c of emitted) {
    check(covered.has(c) || NOT_FROM_THE_PAGE[c], `the core emits '${c}', which this test does not place`);
  }
  
  await page.setViewportSize({ width: 1280, height: 900 });
  await page.goto('about:blank');
  await page.goto(base);
  await t.idle(page);
  for (const c of CASES) {
    t.setStep(`conflicts: ${c.code}${c.golden ? ` (${c.golden})` : ''}`);
    try {
      const dir = c.golden ? join(golden, 'invalid', c.golden) : null;
      const modelRel = c.model || readFileSync(join(dir, 'model'), 'utf8').trim();
      const config = c.config || readFileSync(join(dir, 'config.yaml'), 'utf8');
      await loadModel(page, t, join(golden, modelRel), c.extraModelKey);
      if (c.extraModelKey) await withExtraModelKey(page, base, t, c.extraModelKey, config);
      else await paste(page, t, config);
      if (c.setup) modelTouched = true;
      for (const [key, v] of c.setup || []) {
        await t.setNumber(page, key, v);
        await t.idle(page);
      }
      const f = await findingOf(page, c.code, c.pick);
      if (!check(!!f, `the findings list has a '${c.code}' finding: ${(await page.textContent('#diags')).slice(0, 300)}`)) continue;
      for (const a of c.at || []) {
        const s = await holderState(page, a.holder, a.row, a.pattern);
        const what = `${a.holder}${a.row === undefined ? '' : ` range ${a.row}`}`;
        if (!check(!!s, `${c.code}: the control ${what} is on the page`)) continue;
        check(s.cls.includes(`flag-${f.sev}`), `${c.code}: ${what} carries the ${f.sev} flag (class "${s.cls}")`);
        check(s.flags.includes(f.msg) && s.visible, `${c.code}: ${what} shows the message "${f.msg}" (it shows "${s.flags}")`);
        const marked = s.controls.filter((x) => (f.sev === 'error' ? x.invalid === 'true' : true) && x.described.includes(f.msg));
        check(marked.length >= 1, `${c.code}: a control of ${what} is ${f.sev === 'error' ? 'aria-invalid and ' : ''}described by the message: ${JSON.stringify(s.controls)}`);
        check(f.marked.includes(a.holder), `${c.code}: the finding says where it is marked (${JSON.stringify(f.marked)})`);
      }
      if (c.field) {
        const s = await page.evaluate((k) => {
          const n = document.querySelector(`#parallel [data-key="par/${k}"]`);
          const field = n.closest('.field, .check');
          const ids = (n.getAttribute('aria-describedby') || '').split(/\s+/).filter(Boolean);
          return {
            invalid: n.getAttribute('aria-invalid'),
            cls: field.className,
            flag: [...field.querySelectorAll('.field-flag')].map((x) => x.textContent).join(' '),
            described: ids.map((id) => document.getElementById(id)).filter(Boolean).map((x) => x.textContent).join(' '),
          };
        }, c.field);
        check(s.cls.includes(`flag-${f.sev}`) && s.flag.includes(f.msg), `${c.code}: the ${c.field} field is flagged with the message: ${JSON.stringify(s)}`);
        check((f.sev !== 'error' || s.invalid === 'true') && s.described.includes(f.msg), `${c.code}: the ${c.field} input is ${f.sev === 'error' ? 'aria-invalid and ' : ''}described by it: ${JSON.stringify(s)}`);
        check(f.marked.includes(`field:${c.field}`), `${c.code}: the finding names the ${c.field} field (${JSON.stringify(f.marked)})`);
      }
      if (c.strip) {
        const marked = await page.$$eval(`.strip-lane[data-col="${c.strip.lane}"] .sc.flag-${f.sev}`, (xs) => xs.map((x) => Number(x.dataset.layer)));
        check(JSON.stringify(marked) === JSON.stringify(c.strip.layers), `${c.code}: the strip's ${c.strip.lane} lane marks layers ${JSON.stringify(c.strip.layers)}: ${JSON.stringify(marked)}`);
      }
      if (c.reason) {
        check(c.reason.test(f.noControl), `${c.code}: the finding says why no control shows it: "${f.noControl}"`);
        check(f.marked.length === 0, `${c.code}: and names no control (${JSON.stringify(f.marked)})`);
      } else {
        check(!f.noControl, `${c.code}: a finding with a control does not say it has none ("${f.noControl}")`);
      }
    } catch (err) {
      check(false, `${err.stack || err}`);
    }
  }

  // "Marked at" goes to the control
  t.setStep('conflicts: the finding leads to its control');
  await loadModel(page, t, join(golden, 'models/dense8.yaml'));
  await paste(page, t, readFileSync(join(golden, 'invalid/layer-order/order-overlapping-ranges/config.yaml'), 'utf8'));
  await page.click('#diags li[data-code="layer-order"] .marked-at button');
  const focused = await page.evaluate(() => {
    const a = document.activeElement;
    const row = a.closest('.range-row');
    return { invalid: a.getAttribute('aria-invalid'), row: row && `${row.dataset.target}/${row.dataset.item}` };
  });
  check(focused.row === 'layerSwap:0/1' && focused.invalid === 'true', `"Marked at" focuses the invalid control of range 2 of layer_swap[0]: ${JSON.stringify(focused)}`);
  for (const width of [390, 1280]) {
    await page.setViewportSize({ width, height: 900 });
    await page.waitForTimeout(150);
    await t.axe(page, `conflicts ${width}px`);
  }
  await t.shot(page, '25-conflict-every-code');
}
