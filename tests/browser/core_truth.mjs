// Browser tests: the page tells what the core tells, in its
// own words. Each scenario failed on the page before its fix.
//  - tests/data/mindformers/master/finetune_llama3_1_8b.yaml
//    (research/llama3_1 at f52743ca, tests/data/mindformers/SOURCES.tsv):
//    graph mode, 32 layers on one stage, recompute_config recompute: True.
//  - tests/data/real-configs/pynative_ds3.yaml: data_parallel_shard: -1
//    (line 39) and no device count.
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';

const LLAMA = 'tests/data/mindformers/master/finetune_llama3_1_8b.yaml';
const DS3 = 'tests/data/real-configs/pynative_ds3.yaml';

function cli(t, args) {
  const r = spawnSync(t.MEMOPT, args, { cwd: t.ROOT, encoding: 'utf8', maxBuffer: 1 << 26 });
  return JSON.parse(r.stdout);
}

async function fresh(page, base, t) {
  await page.goto('about:blank');
  await page.goto(base);
  await t.idle(page);
}

async function upload(page, t, file) {
  const name = file.split('/').pop();
  await page.setInputFiles('#file', join(t.ROOT, file));
  await page.waitForFunction((n) => window.memopt.state.training && window.memopt.state.training.name === n, name);
  await t.idle(page);
}

const yamlOf = (page) => page.inputValue('#yaml-text');

async function paste(page, t, text) {
  await page.locator('#yaml-text').focus();
  await page.keyboard.press('Control+A');
  await page.keyboard.insertText(text);
  await t.idle(page);
}

// ---- the step time ---------------------------------------------------------------------

function secs(v) {
  return v >= 1 ? `${v.toFixed(2)} s` : `${(v * 1000).toFixed(v >= 0.1 ? 0 : 1)} ms`;
}

async function stepTime(page, base, t) {
  const { check } = t;
  await fresh(page, base, t);
  await upload(page, t, LLAMA);
  const want = cli(t, ['estimate', '--json', LLAMA]).time;
  const box = page.locator('#step-time');
  check(await box.count() === 1, 'the memory panel shows the step time');
  if (!await box.count()) return;
  const head = await page.textContent('#step-time summary');
  check(head.includes(secs(want.step_seconds)), `the step is the CLI's ${secs(want.step_seconds)}: ${head}`);
  const tps = Math.round(want.tokens_per_second_per_device).toLocaleString('en-US');
  check(head.includes(`${tps} tokens/s per device`), `tokens/s per device ${tps}: ${head}`);
  check(head.includes(`MFU ${(want.mfu * 100).toFixed(1)} %`), `MFU ${(want.mfu * 100).toFixed(1)} %: ${head}`);
  await page.click('#step-time summary');
  const rows = await page.$$eval('#step-time tbody tr', (trs) => trs.map((tr) => tr.dataset.term));
  const terms = ['gemm_seconds', 'attention_seconds', 'memory_bound_seconds', 'comm_tp_seconds', 'comm_cp_seconds',
    'comm_ep_seconds', 'comm_pp_seconds', 'comm_dp_seconds', 'bubble_seconds', 'optimizer_seconds', 'recompute_seconds',
    'swap_seconds', 'fixed_seconds'].filter((k) => want[k] > 0);
  check(JSON.stringify(rows) === JSON.stringify(terms), `the breakdown lists the step's non-zero parts: ${rows}`);
  const sum = terms.reduce((a, k) => a + want[k], 0);
  check(Math.abs(sum - want.step_seconds) < 1e-6 * want.step_seconds, `the parts add up to the step (${sum} vs ${want.step_seconds})`);
  await t.axe(page, 'step-time');
}

// ---- plain error texts ------------------------------------------------------------------

async function plainErrors(page, base, t) {
  const { check } = t;
  await fresh(page, base, t);
  // a model file with a NUL character: the file's own line and column, in plain words
  t.allowStatus(400);
  await page.setInputFiles('#file', { name: 'nul.json', mimeType: 'application/json', buffer: Buffer.from('{"model": {"num_layers": "\\u0000"}}') });
  await page.waitForFunction(() => /error/i.test(document.querySelector('#upload-status').textContent));
  const up = await page.textContent('#upload-status');
  check(!/JSON_ALLOW_NUL/.test(up), `no jansson flag in the upload error: ${up}`);
  check(/NUL character/.test(up) && /line 1, column \d+/.test(up), `the upload error says NUL character at the file's line and column: ${up}`);
  t.allowStatus(null);
  // a training YAML whose device count is unknown: what to do, in the page's words
  t.allowStatus(422);
  await upload(page, t, DS3);
  const mem = await page.textContent('#memory');
  check(!/--devices|API:|"devices"/.test(mem), `no CLI flag or API member in the memory panel: ${mem}`);
  check(/device count/i.test(mem) && /Devices/.test(mem), `the memory panel says to set the device count: ${mem}`);
  // the planner asked anyway: its refusal in the same words
  await page.click('#fit');
  await page.waitForFunction(() => /Proposal|No plan|refused|error|device/i.test(document.querySelector('#fit-status').textContent));
  await t.idle(page);
  const fit = await page.textContent('#fit-status');
  check(!/--devices|API:|"devices"|model-needed: /.test(fit), `no CLI flag or API member in the planner's answer: ${fit}`);
  t.allowStatus(null);
  await t.axe(page, 'plain-errors');
}

// ---- the layer strip: one entry per lane edit, a zoom, the layer under the pointer ---------

// Drags on a lane between two layers of the window in view (first, count),
// holding the button at the end when hold is true.
async function dragLane(page, col, from, to, first, count, hold = false) {
  const cells = page.locator(`.strip-lane[data-col="${col}"] .strip-cells`);
  await cells.scrollIntoViewIfNeeded();
  const box = await cells.boundingBox();
  const x = (l) => box.x + ((l - first + 0.5) / count) * box.width;
  const y = box.y + box.height / 2;
  await page.mouse.move(x(from), y);
  await page.mouse.down();
  await page.mouse.move(x((from + to) / 2), y, { steps: 3 });
  await page.mouse.move(x(to), y, { steps: 3 });
  if (!hold) await page.mouse.up();
}

// Every mechanism has its lane: select_module and recompute_comm without a
// pattern (read-only, saying where a pattern is added; the page before had
// no lane for them), and one lane a pattern once there are some, painted
// by dragging like the others.
async function patternLanes(page, base, t) {
  const { check } = t;
  await fresh(page, base, t);
  await paste(page, t, 'recompute:\n  mode: None\n');
  for (const col of ['select', 'comm']) {
    const lane = page.locator(`.strip-lane[data-col="${col}"]`);
    check(await lane.count() === 1, `a ${col} lane with no pattern yet`);
    if (await lane.count()) {
      check(/no pattern yet; add one with the plan's/.test(await lane.getAttribute('title')) && /readonly/.test(await lane.getAttribute('class')),
        `read-only, saying where a pattern is added: ${await lane.getAttribute('title')}`);
    }
  }
  await paste(page, t, "recompute:\n  mode: select\n  select_module:\n    '.*mlp': [0-3]\nrecompute_comm:\n  enable: True\n  select_module:\n    '.*allgather': [0-1]\n");
  const marked = await page.$$eval('.strip-lane[data-col="select:.*mlp"] .sc.a-recompute', (cs) => cs.map((c) => Number(c.dataset.layer)));
  check(JSON.stringify(marked) === '[0,1,2,3]', `the '.*mlp' lane marks layers 0-3: ${JSON.stringify(marked)}`);
  check(await page.locator('.strip-lane[data-col="comm:.*allgather"]').count() === 1, 'a lane for the recompute_comm pattern');
  check(await page.locator('.strip-lane[data-col="select"], .strip-lane[data-col="comm"]').count() === 0, 'no empty lane beside the patterns\' lanes');
  await dragLane(page, 'select:.*mlp', 6, 7, 0, 32);
  await t.idle(page);
  check((await yamlOf(page)).includes("'.*mlp': [0-3, 6-7]"), `a drag on the '.*mlp' lane adds 6-7 to its entry: ${await yamlOf(page)}`);
  for (const width of [1280, 360]) {
    await page.setViewportSize({ width, height: 900 });
    await t.axe(page, `pattern lanes ${width}px`);
  }
  await page.setViewportSize({ width: 1280, height: 900 });
}

const SWAP_ENTRIES = `recompute:
  mode: full
  full_recompute_layer: [0-1]
swap:
  enable: True
  layer_swap:
    # the early layers: their activations are the largest
    - layers: [4-5]
      backward_prefetch: 1
    # the late layers, kept apart on purpose
    - layers: [20-21]
      backward_prefetch: 1
`;

async function laneEntries(page, base, t) {
  const { check } = t;
  await fresh(page, base, t);
  await paste(page, t, SWAP_ENTRIES);
  // layers 7-8 go to the entry nearest them (the first); the other and every comment stay
  await dragLane(page, 'layerSwap', 7, 8, 0, 32);
  await t.idle(page);
  let y = await yamlOf(page);
  check(/- layers: \[4-5, 7-8\]/.test(y) && /- layers: \[20-21\]/.test(y), `painting adds 7-8 to the first entry only: ${y}`);
  check(y.includes('# the early layers: their activations are the largest') && y.includes('# the late layers, kept apart on purpose'),
    `the comments between the entries stay: ${y}`);
  check((y.match(/backward_prefetch: 1/g) || []).length === 2, `each entry keeps its backward_prefetch: ${y}`);
  // removing from a named layer edits the entry that names it
  await dragLane(page, 'layerSwap', 21, 21, 0, 32);
  await t.idle(page);
  y = await yamlOf(page);
  check(/- layers: \[4-5, 7-8\]/.test(y) && /- layers: \[20\]/.test(y) && y.includes('# the late layers'), `a drag from layer 21 removes it from the second entry only: ${y}`);
}

async function bigModel(page, base, t, layers) {
  const m = await (await fetch(`${base}api/v1/presets/llama2-7b`)).json();
  m.model.num_layers = layers;
  await page.setInputFiles('#file', { name: `big${layers}.json`, mimeType: 'application/json', buffer: Buffer.from(JSON.stringify(m)) });
  await page.waitForFunction((n) => window.memopt.state.model.label === n, `big${layers}.json`);
  await t.idle(page);
}

async function stripZoom(page, base, t) {
  const { check } = t;
  await fresh(page, base, t);
  await paste(page, t, 'recompute:\n  mode: full\n  full_recompute_layer: [0-1]\n');
  await bigModel(page, base, t, 128);
  // the layer under the pointer while dragging, and the range so far
  await dragLane(page, 'full', 40, 50, 0, 128, true);
  const tipText = await page.evaluate(() => { const x = document.querySelector('.strip-tip'); return x && !x.hidden ? x.textContent : null; });
  check(tipText === 'layers 40–50', `while dragging the strip says the layers under the pointer: ${tipText}`);
  await page.mouse.up();
  await t.idle(page);
  check((await yamlOf(page)).includes('full_recompute_layer: [0-1, 40-50]'), `the drag painted 40-50: ${await yamlOf(page)}`);
  const zin = page.locator('[data-key="strip/zoom-in"]');
  check(await zin.count() === 1, 'the strip has a zoom-in button');
  if (!await zin.count()) return;
  const cellW = () => page.$eval('.strip-lane[data-col="full"] .sc:not([hidden])', (c) => c.getBoundingClientRect().width);
  const w0 = await cellW();
  await zin.click();
  await zin.click();
  const shown = await page.$$eval('.strip-lane[data-col="full"] .sc', (cs) => cs.filter((c) => !c.hidden).map((c) => Number(c.dataset.layer)));
  const label = await page.textContent('.strip-window');
  check(shown.length === 32, `zoomed in twice: 32 of 128 layers in view (${shown.length}; ${label})`);
  const w1 = await cellW();
  check(w1 >= 3.5 * w0, `each cell is about 4x wider: ${w0.toFixed(1)} -> ${w1.toFixed(1)} px`);
  const first = shown[0];
  check(label === `layers ${first}–${first + 31} of 128`, `the window is named: ${label}`);
  await page.click('[data-key="strip/left"]');
  await page.click('[data-key="strip/left"]');
  await page.click('[data-key="strip/left"]');
  check((await page.textContent('.strip-window')) === 'layers 0–31 of 128', `panned to the first layers: ${await page.textContent('.strip-window')}`);
  // a drag in the zoomed window paints the layers under the pointer
  await dragLane(page, 'full', 20, 24, 0, 32);
  await t.idle(page);
  check((await yamlOf(page)).includes('full_recompute_layer: [0-1, 20-24, 40-50]'), `a zoomed drag paints 20-24: ${await yamlOf(page)}`);
  // the keyboard cursor walking out of the window takes the window along
  await page.locator('[data-key="strip/full"]').focus();
  await page.keyboard.press('End');
  check((await page.textContent('.strip-window')) === 'layers 96–127 of 128', `End shows the last layers: ${await page.textContent('.strip-window')}`);
  for (const width of [1280, 360]) {
    await page.setViewportSize({ width, height: 900 });
    await page.waitForTimeout(150);
    const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
    check(overflow <= 0, `${width} px: the zoomed strip does not widen the page (${overflow} px)`);
    await t.axe(page, `strip-zoom ${width}px`);
  }
  await page.setViewportSize({ width: 1280, height: 900 });
}

// ---- table headers at 360 px ------------------------------------------------------------

// The header cells (th) of the tables in view whose words break inside:
// a word drawn on more than one line has more than one client rect.
function brokenHeaders(page) {
  return page.evaluate(() => {
    const out = [];
    for (const th of document.querySelectorAll('table th')) {
      // a pattern (code) may wrap anywhere; a word is what hyphens and spaces part
      if (!th.offsetParent || th.closest('.vh')) continue;
      const walker = document.createTreeWalker(th, NodeFilter.SHOW_TEXT, { acceptNode: (n) => (n.parentElement.closest('code, .vh') ? NodeFilter.FILTER_REJECT : NodeFilter.FILTER_ACCEPT) });
      for (let n = walker.nextNode(); n; n = walker.nextNode()) {
        const re = /[^\s-]+/g;
        for (let m = re.exec(n.data); m; m = re.exec(n.data)) {
          const r = document.createRange();
          r.setStart(n, m.index);
          r.setEnd(n, m.index + m[0].length);
          const lines = new Set([...r.getClientRects()].filter((x) => x.width > 0).map((x) => Math.round(x.top)));
          if (lines.size > 1) out.push(`${th.closest('table').className || th.closest('table').id}: "${m[0]}"`);
        }
      }
    }
    return out;
  });
}

async function headers360(page, base, t) {
  const { check } = t;
  await fresh(page, base, t);
  await upload(page, t, LLAMA);
  await page.setViewportSize({ width: 360, height: 800 });
  await page.waitForTimeout(150);
  for (const sel of ['#trust summary', '#step-time summary']) if (await page.locator(sel).count()) await page.click(sel);
  const views = [['stages', null], ['layers', '#mtab-layers']];
  for (const [name, tab] of views) {
    if (tab && await page.locator(tab).count()) {
      await page.click(tab);
      await t.idle(page);
    }
    const broken = await brokenHeaders(page);
    check(broken.length === 0, `360 px, ${name} view: table headers broken mid-word: ${broken.slice(0, 8).join(', ')}`);
  }
  const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
  check(overflow <= 0, `360 px: the page is ${overflow} px wider than the screen`);
  await t.axe(page, 'headers 360px');
  await page.setViewportSize({ width: 1280, height: 900 });
}

// ---- chart read-outs on hover and keyboard focus ---------------------------------------------

async function chartReadout(page, base, t) {
  const { check } = t;
  await fresh(page, base, t);
  await paste(page, t, 'recompute:\n  mode: full\n  full_recompute_layer: [0-7]\n');
  await page.click('#mtab-timeline');
  await t.idle(page);
  await page.waitForFunction(() => { const e = window.memopt.state.estimate; return e && e.ok && e.data.stages[0].timeline; });
  const tl = await page.evaluate(() => window.memopt.state.estimate.data.stages[0].timeline);
  const g = (b) => `${(b / 2 ** 30).toFixed(2)} GiB`;
  const chart = page.locator('#mtab-panel svg.timeline');
  const r = await chart.boundingBox();
  const k = Math.floor(tl.length / 3);
  // the chart's geometry: a 640-unit view box, 48 units of axis on the left, 8 on the right
  const x = r.x + ((48 + (k + 0.5) * ((640 - 56) / tl.length)) / 640) * r.width;
  await page.mouse.move(x, r.y + r.height / 2);
  const out = page.locator('#mtab-panel .readout');
  check(await out.count() === 1, 'the timeline has a read-out');
  if (!await out.count()) return;
  let text = await out.textContent();
  check(text.includes(`Event ${k + 1} of ${tl.length}`) && text.includes(`"${tl[k].event}"`) && text.includes(g(tl[k].total_bytes)),
    `hovering event ${k + 1} ("${tl[k].event}", ${g(tl[k].total_bytes)}) reads it out: ${text}`);
  const slider = page.locator('[data-key="tl/0"]');
  await slider.focus();
  await page.keyboard.press('Home');
  text = await out.textContent();
  check(text.startsWith(`Event 1 of ${tl.length}, "${tl[0].event}"`), `Home reads the first event: ${text}`);
  await page.keyboard.press('ArrowRight');
  check((await slider.getAttribute('aria-valuetext')).startsWith(`Event 2 of ${tl.length}, "${tl[1].event}"`),
    `the arrow reads the next event to a screen reader: ${await slider.getAttribute('aria-valuetext')}`);
  await page.keyboard.press('End');
  check((await out.textContent()).startsWith(`Event ${tl.length} of`), 'End reads the last event');
  for (const width of [1280, 390]) {
    await page.setViewportSize({ width, height: 900 });
    await page.waitForTimeout(100);
    await t.axe(page, `timeline read-out ${width}px`);
  }
  await page.setViewportSize({ width: 1280, height: 900 });
}

// The trace comparison's chart, read the same way. tests/data/ledger/README
// and notes/ledger-decode-pp2-stage0.md: the pp2 stage-0 ledger peaks at
// 10246.24 MiB (the Mul of line 8).
async function ledgerReadout(page, base, t) {
  const { check } = t;
  await fresh(page, base, t);
  await page.setInputFiles('#file', join(t.ROOT, 'tests/data/ledger/dsv3-8l-pp2.yaml'));
  await page.waitForFunction(() => window.memopt.state.model.label === 'dsv3-8l-pp2.yaml');
  await t.idle(page);
  await page.fill('#ledger-stage', '0');
  await page.locator('#ledger-stage').blur();
  await page.setInputFiles('#trace-file', join(t.ROOT, 'tests/data/ledger/pp2-stage0-optimizer.csv'));
  await page.waitForFunction(() => ['done', 'error'].includes(document.querySelector('#ledger').dataset.state), null, { timeout: 20000 });
  const out = page.locator('#ledger-readout');
  check(await out.count() === 1, 'the trace chart has a read-out');
  if (!await out.count()) return;
  check(/^Measured, row \d+ of \d+ drawn: 10246\.24 MiB at /.test(await out.textContent()), `it starts at the measured peak: ${await out.textContent()}`);
  const slider = page.locator('[data-key="ledger/readout"]');
  await slider.focus();
  await page.keyboard.press('Home');
  check(/^Measured, row 1 of/.test(await slider.getAttribute('aria-valuetext')), `Home reads the first row: ${await slider.getAttribute('aria-valuetext')}`);
  // the pointer reads both curves at the time under it
  const r = await page.locator('#ledger svg.ledger-timeline').boundingBox();
  await page.mouse.move(r.x + r.width * 0.5, r.y + r.height * 0.3);
  check(/^At \d+\.\d ms: measured \d+\.\d\d MiB, estimated \d+\.\d\d MiB \(".+"\)$/.test(await out.textContent()), `the pointer reads the measured and the estimated value at its time: ${await out.textContent()}`);
  await t.axe(page, 'ledger read-out');
}

// ---- the planner says why and draws its proposal -------------------------------------------

async function plannerWhy(page, base, t) {
  const { check } = t;
  await fresh(page, base, t);
  await page.selectOption('#preset', 'mixtral-8x7b');
  await page.waitForFunction(() => window.memopt.state.model.label === 'mixtral-8x7b');
  await t.idle(page);
  const none = 'recompute:\n  mode: None\n';
  await paste(page, t, none);
  await page.click('#fit');
  await page.waitForFunction(() => /Proposal|No plan|refused|error/.test(document.querySelector('#fit-status').textContent));
  await t.idle(page);
  const p = await page.evaluate(() => window.memopt.state.fit.proposal);
  check(p && p.fits, `the planner fits mixtral-8x7b: ${await page.textContent('#fit-status')}`);
  if (!p) return;
  const items = await page.$$eval('.fit-changes li', (lis) => lis.map((li) => ({ section: li.dataset.section, text: li.textContent })));
  check(items.length > 0 && items.every((i) => /saves|adds/.test(i.text) && /cost|saves [\d.]+ s/.test(i.text)),
    `each change says what it saves and costs: ${JSON.stringify(items)}`);
  // a section alone, from a plan of nothing but 'mode: None', is the current
  // plan with the proposal's section: what it saves and costs is the CLI's
  // figure without it minus the CLI's with it
  const first = items[0];
  const name = { recompute: 'recompute', comm: 'recompute_comm', swap: 'swap' }[first && first.section];
  check(!!name, `the change names its section: ${JSON.stringify(items)}`);
  if (name) {
    const est = (yaml) => JSON.parse(spawnSync(t.MEMOPT, ['estimate', '--json', '--model', 'mixtral-8x7b', '-'],
      { cwd: t.ROOT, input: yaml, encoding: 'utf8', maxBuffer: 1 << 26 }).stdout);
    const section = new RegExp(`^${name}:\\n(?:[ #].*\\n|\\n)*`, 'm').exec(p.config)[0];
    const alone = name === 'recompute' ? section : `${none}${section}`;
    const before = est(none);
    const after = est(alone);
    const saved = `saves ${((before.peak_bytes - after.peak_bytes) / 2 ** 30).toFixed(2)} GiB of peak`;
    const cost = after.time.step_seconds - before.time.step_seconds;
    check(first.text.includes(saved), `the ${name} section saves what the CLI says (${saved}): ${first.text}`);
    const costText = Math.abs(cost) < 5e-4 ? 'costs no step time' : `costs +${cost.toFixed(3)} s a step`;
    check(first.text.includes(costText), `and costs what the CLI says (${costText}): ${first.text}`);
  }
  const lane = page.locator('.strip-lane[data-col="proposal"]');
  check(await lane.count() === 1, 'the proposal is drawn as a lane of the layer strip');
  // per layer what the lane draws: recompute or swap
  const actions = (sel) => page.$$eval(sel, (cs) => {
    const out = {};
    for (const c of cs) for (const a of ['recompute', 'swap']) if (c.classList.contains(`a-${a}`)) out[c.dataset.layer] = a;
    return out;
  });
  const drawn = await actions('.strip-lane[data-col="proposal"] .sc');
  const said = await page.textContent('.strip-lane[data-col="proposal"] .proposal-text').catch(() => '');
  check(Object.keys(drawn).length > 0 && /(recompute|swap) on layers/.test(said), `the lane marks the layers the proposal changes and says them: ${Object.keys(drawn).length} layers; ${said}`);
  await t.axe(page, 'planner why');
  await page.click('#fit-accept');
  await t.idle(page);
  check(await lane.count() === 0, 'accepted: the proposal lane is gone');
  const now = await actions('.strip-lane:not(.proposal) .sc');
  check(JSON.stringify(now) === JSON.stringify(drawn), `the lane drew what the accepted plan does: ${JSON.stringify(drawn)} vs ${JSON.stringify(now)}`);
}

// ---- saved variants side by side --------------------------------------------------------

async function variantsSideBySide(page, base, t) {
  const { check } = t;
  await fresh(page, base, t);
  await page.evaluate(() => localStorage.removeItem('memopt.variants'));
  await fresh(page, base, t);
  const save = page.locator('#variant-save');
  check(await save.count() === 1, 'the page can save a variant');
  if (!await save.count()) return;
  const plans = { A: 'recompute:\n  mode: full\n  full_recompute_layer: [0-7]\n', B: 'recompute:\n  mode: full\n  full_recompute_layer: [0-23]\n' };
  for (const [name, yaml] of Object.entries(plans)) {
    await paste(page, t, yaml);
    await page.fill('#variant-name', name);
    await save.click();
    await t.idle(page);
  }
  const now = 'recompute:\n  mode: None\n';
  await paste(page, t, now);
  const heads = await page.$$eval('table.variants thead th', (ths) => ths.map((th) => th.textContent));
  check(JSON.stringify(heads) === JSON.stringify(['Figure', 'Now', 'A', 'B']), `the plan now and the two variants side by side: ${heads}`);
  const rowOf = (label) => page.$$eval('table.variants tbody tr', (trs, l) => {
    const tr = trs.find((x) => x.querySelector('th').textContent.replace(' ≠', '') === l);
    return tr ? { cells: [...tr.querySelectorAll('td')].map((td) => td.textContent), differs: tr.classList.contains('differs') } : null;
  }, label);
  const peak = (yaml) => JSON.parse(spawnSync(t.MEMOPT, ['estimate', '--json', '--model', 'llama2-7b', '-'],
    { cwd: t.ROOT, input: yaml, encoding: 'utf8' }).stdout).peak_bytes;
  const want = [now, plans.A, plans.B].map((y) => `${(peak(y) / 2 ** 30).toFixed(2)} GiB`);
  const got = await rowOf('Peak');
  check(got && JSON.stringify(got.cells) === JSON.stringify(want) && got.differs, `the peaks are the CLI's (${want}): ${JSON.stringify(got)}`);
  const full = await rowOf('full_recompute_layer');
  check(full && JSON.stringify(full.cells) === JSON.stringify(['none', '0-7', '0-23']) && full.differs, `what each sets, marked as differing: ${JSON.stringify(full)}`);
  for (const width of [1280, 360]) {
    await page.setViewportSize({ width, height: 900 });
    await page.waitForTimeout(100);
    await t.axe(page, `variants ${width}px`);
  }
  await page.setViewportSize({ width: 1280, height: 900 });
  await page.click('[data-key="variant/load/0"]');
  await t.idle(page);
  check((await yamlOf(page)).includes('full_recompute_layer: [0-7]'), `Load A brings its plan back: ${await yamlOf(page)}`);
  // kept in this browser: a reload still lists them
  await fresh(page, base, t);
  check(await page.locator('table.variants thead th').count() === 4, 'the variants are still there after a reload');
  await page.click('[data-key="variant/remove/1"]');
  check(await page.locator('table.variants thead th').count() === 3, 'Remove drops a variant');
  await page.evaluate(() => localStorage.removeItem('memopt.variants'));
}

export async function coreTruth(page, base, t) {
  for (const [name, fn] of [['step time', stepTime], ['plain errors', plainErrors], ['lane edits one entry', laneEntries], ['pattern lanes', patternLanes],
    ['strip zoom and pointer', stripZoom], ['headers at 360 px', headers360],
    ['chart read-outs', chartReadout], ['ledger read-out', ledgerReadout], ['planner why', plannerWhy],
    ['variants side by side', variantsSideBySide]]) {
    if (process.env.ROUND3_ONLY && name !== process.env.ROUND3_ONLY) continue; // one scenario, by name
    t.setStep(`core_truth: ${name}`);
    try {
      await fn(page, base, t);
    } catch (err) {
      t.check(false, `${err.stack || err}`);
    }
  }
}
