// Browser tests of editing in the web UI (undo, layout, conflicts, the planner,
// keeping the user's text): one scenario per defect found in review, each from
// a fresh page, each written so that it fails on the UI before the fix (its
// comment says what was wrong).
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

// t: {check, log, idle, axe, shot, setStep, setNumber, cellText, ROOT, OUT, MEMOPT}
export async function editing(page, base, t) {
  const items = [
    ['item 1: undo never corrupts the text', item1Undo],
    ['item 2: one column on narrow screens', item2Layout],
    ['item 3: conflicts on the control that causes them', item3Conflicts],
    ['item 4: out of memory is a finding', item4OutOfMemory],
    ['item 5: a planner the user steers', item5Fit],
    ['item 5: headroom beside the budget', item5Headroom],
    ['item 6: edits keep the user\'s text', item6KeepText],
    ['item 6: comments between list entries stay', item6EntryComments],
    ['item 7: new entries do not collide', item7NewEntries],
    ['item 8: every layer-map column visible', item8MapColumns],
    ['item 9: no silent failures', item9Feedback],
    ['item 10: the small items', item10Small],
    ['layer strip: paint ranges', stripPaint],
  ];
  for (const [name, fn] of items) {
    t.setStep(name);
    try {
      await page.setViewportSize({ width: 1280, height: 900 });
      await fn(page, base, t);
    } catch (err) {
      t.check(false, `${err.stack || err}`);
    }
  }
}

async function fresh(page, base, t) {
  await page.goto('about:blank');
  await page.goto(base);
  await t.idle(page);
}

const yamlOf = (page) => page.inputValue('#yaml-text');

// Replaces the YAML text as a paste would (one input event).
async function paste(page, t, text) {
  await page.locator('#yaml-text').focus();
  await page.keyboard.press('Control+A');
  await page.keyboard.insertText(text);
  await t.idle(page);
}

async function undoKey(page, t, redo = false) {
  await page.keyboard.press(redo ? 'Control+Shift+Z' : 'Control+Z');
  await t.idle(page);
}

async function diagSummary(page) {
  return (await page.textContent('#diag-summary')) || '';
}

// ---- item 1 ---------------------------------------------------------------------------

async function item1Undo(page, base, t) {
  const { check } = t;
  await fresh(page, base, t);
  const start = await yamlOf(page);
  const A = 'recompute:\n  mode: full\n  full_recompute_layer: [0-3]\n';
  const B = 'recompute:\n  mode: full\n  full_recompute_layer: [0-7]\n';
  await paste(page, t, A);
  await paste(page, t, B);
  const hi = page.locator('[data-key="full/0/hi"]');
  check(await hi.getAttribute('aria-valuenow') === '7', 'the slider follows the pasted text');
  await hi.focus();
  await page.keyboard.press('ArrowRight');
  await t.idle(page);
  check((await yamlOf(page)).includes('[0-8]'), 'the slider moved the text to [0-8]');
  // back into the YAML box, then the browser's undo key
  await page.click('#yaml-text');
  await undoKey(page, t);
  check(await yamlOf(page) === B, `Ctrl+Z in the YAML box undoes the slider: ${JSON.stringify(await yamlOf(page))}`);
  check(await page.locator('[data-key="full/0/hi"]').getAttribute('aria-valuenow') === '7', 'and the slider is back at 7');
  await undoKey(page, t);
  check(await yamlOf(page) === A, `a second Ctrl+Z gives the first paste: ${JSON.stringify(await yamlOf(page))}`);
  await undoKey(page, t);
  check(await yamlOf(page) === start, `a third gives the start: ${JSON.stringify(await yamlOf(page))}`);
  check(/valid/.test(await diagSummary(page)) && !/error/.test(await diagSummary(page)), 'every state undone to is a valid config');
  for (let i = 0; i < 3; i += 1) await undoKey(page, t, true);
  check((await yamlOf(page)).includes('[0-8]'), `Ctrl+Shift+Z three times redoes up to the slider: ${JSON.stringify(await yamlOf(page))}`);
  // typing, then undo: the typing goes
  await page.locator('#yaml-text').focus();
  await page.keyboard.press('Control+End');
  await page.keyboard.type('# note\n');
  await page.waitForTimeout(900);
  await t.idle(page);
  check((await yamlOf(page)).includes('# note'), 'typed text is in the box');
  await undoKey(page, t);
  check(!(await yamlOf(page)).includes('# note') && (await yamlOf(page)).includes('[0-8]'), `Ctrl+Z undoes the typing: ${JSON.stringify(await yamlOf(page))}`);
  // a control that is not the plan: TP; and the Undo button
  await t.setNumber(page, 'par/tensor_parallel', 2);
  await t.idle(page);
  check(await page.evaluate(() => window.memopt.state.model.obj.parallel.tensor_parallel) === 2, 'TP set to 2');
  check(!(await page.isDisabled('#undo')), 'the Undo button is enabled');
  await page.click('#undo');
  await t.idle(page);
  check(await page.evaluate(() => window.memopt.state.model.obj.parallel.tensor_parallel) === 1, 'Undo puts TP back to 1');
  check(await page.inputValue('[data-key="par/tensor_parallel"]') === '1', 'and the TP field shows 1');
  await page.click('#redo');
  await t.idle(page);
  check(await page.inputValue('[data-key="par/tensor_parallel"]') === '2', 'Redo sets TP to 2 again');
  await t.axe(page, 'undo');
}

// ---- item 2 ---------------------------------------------------------------------------

async function columnsAt(page, width, t) {
  await page.setViewportSize({ width, height: 900 });
  await page.waitForTimeout(150);
  return page.evaluate(() => {
    const r = (sel) => document.querySelector(sel).getBoundingClientRect();
    return {
      overflow: document.documentElement.scrollWidth - window.innerWidth,
      controls: r('.controls'), main: r('#results'), yaml: r('.col.yaml'),
      mapHidden: (() => { const w = document.querySelector('#map-wrap'); return w.scrollWidth - w.clientWidth; })(),
    };
  });
}

async function item2Layout(page, base, t) {
  const { check } = t;
  await fresh(page, base, t);
  for (const width of [360, 390, 768]) {
    const c = await columnsAt(page, width, t);
    check(c.overflow <= 0, `${width} px: the page is ${c.overflow} px wider than the window`);
    // below 600 px the results come first (a phone), then the controls
    const stacked = width < 600 ? c.controls.top >= c.main.bottom - 1 && c.yaml.top >= c.controls.bottom - 1
      : c.main.top >= c.controls.bottom - 1 && c.yaml.top >= c.main.bottom - 1;
    check(stacked, `${width} px: the panels stack in one column`);
    for (const [name, r] of [['controls', c.controls], ['results', c.main], ['YAML', c.yaml]]) {
      check(r.width >= width - 40, `${width} px: the ${name} panel is ${Math.round(r.width)} px wide`);
    }
    check(c.mapHidden <= 1, `${width} px: the layer map hides ${c.mapHidden} px sideways`);
    await t.axe(page, `${width}px`);
  }
  await page.setViewportSize({ width: 390, height: 844 });
  await page.waitForTimeout(100);
  await t.shot(page, '20-390px');
  for (const width of [1024, 1280, 1920]) {
    const c = await columnsAt(page, width, t);
    check(c.overflow <= 0, `${width} px: the page is ${c.overflow} px wider than the window`);
    await t.axe(page, `${width}px`);
    if (width !== 1024) await t.shot(page, `21-${width}px`);
  }
  const c = await columnsAt(page, 1280, t);
  check(c.yaml.left > c.main.right && c.main.left > c.controls.right, '1280 px: three columns side by side');
}

// ---- item 3 ---------------------------------------------------------------------------

async function item3Conflicts(page, base, t) {
  const { check } = t;
  await fresh(page, base, t);
  // a layer_swap range past the model marks its own range row
  await paste(page, t, 'swap:\n  enable: True\n  layer_swap:\n    - layers: [2-3]\n    - layers: [30-35]\n');
  check(await page.locator('.range-row[data-target="layerSwap:1"].flag-error').count() === 1, 'layer_swap[1] [30-35] on 32 layers marks its range row');
  check(await page.locator('.range-row[data-target="layerSwap:0"].flag-error').count() === 0, 'layer_swap[0] is not marked');
  // overlapping ranges of one list mark the layers they share
  await paste(page, t, 'recompute:\n  mode: full\n  full_recompute_layer: [0-10, 5-12]\n');
  const rows = await page.$$eval('#layer-map tbody tr.row-error, #layer-map tbody tr.row-warning', (trs) => trs.map((tr) => Number(tr.dataset.layer)));
  check(JSON.stringify(rows) === '[5,6,7,8,9,10]', `overlapping [0-10, 5-12] marks layers 5-10 on the map: ${JSON.stringify(rows)}`);
  // a bad regex marks its pattern input
  await paste(page, t, "recompute:\n  mode: select\n  select_module:\n    '.*mlp(': [0-3]\n");
  check(await page.locator('.entry[data-entry-key="sel/0"].flag-error, .entry[data-entry-key="sel/0"] input.pattern[aria-invalid="true"]').count() >= 1,
    'a pattern that does not compile marks its entry');
  check(await page.locator('[data-key="sel/0/pattern"][aria-invalid="true"]').count() === 1, 'and its input is aria-invalid');
  // PP 2 with swap on: marked on the PP field and on the swap switch
  await paste(page, t, 'swap:\n  enable: True\n  layer_swap:\n    - layers: [0-1]\n');
  await t.setNumber(page, 'par/pipeline_parallel', 2);
  await t.idle(page);
  const d = await page.textContent('#diags');
  if (/pipeline|PP/i.test(d)) {
    check(await page.locator('#parallel .field.flag-error, #parallel .field.flag-warning').count() >= 1, `PP 2 with swap on is marked at the PP field: ${d.slice(0, 300)}`);
    check(await page.locator('[data-target="swapEnable"].flag-error, [data-target="swapEnable"].flag-warning').count() === 1, 'and at the swap switch');
  } else check(false, `no finding about PP with swap: ${d.slice(0, 300)}`);
  await t.axe(page, 'conflicts');
  await t.shot(page, '22-conflicts');
}

// ---- item 4 ---------------------------------------------------------------------------

async function item4OutOfMemory(page, base, t) {
  const { check } = t;
  await fresh(page, base, t); // llama2-7b, no plan: 64.56 GiB of 58.00 GiB
  const mem = await page.textContent('#memory');
  check(/over by/.test(mem), `llama2-7b without a plan is over the device: ${mem.slice(0, 120)}`);
  const summary = await diagSummary(page);
  check(!/^✓ valid/.test(summary) && /out of memory/.test(summary), `the findings do not say just "valid": ${summary}`);
  const finding = await page.textContent('#diags li[data-code="out-of-memory"]').catch(() => '');
  check(/stage 0/.test(finding) && /GiB/.test(finding) && /58\.00 GiB/.test(finding), `an out-of-memory finding names the stage, the peak and the capacity: ${finding}`);
  const reason = await page.textContent('#export-reason');
  check(!/Ready/.test(reason) && /out of memory/.test(reason), `export does not say "Ready": ${reason}`);
  let downloaded = false;
  const onDownload = () => { downloaded = true; };
  page.on('download', onDownload);
  await page.click('#export');
  await page.waitForTimeout(800);
  check(!downloaded, 'the first click does not download');
  check(await page.isVisible('#export-confirm'), 'it asks to confirm');
  await t.axe(page, 'oom-confirm');
  const [dl] = await Promise.all([page.waitForEvent('download'), page.click('#export-anyway')]);
  check(!!dl, 'Download anyway downloads');
  page.off('download', onDownload);
  check(/Downloaded/.test(await page.textContent('#export-status')), 'the download is confirmed on the page');
  await page.click('.diff-box summary');
  await page.selectOption('#diff-base', 'export');
  check(await page.isVisible('#diff-same'), 'the diff against the last download says they are the same');
  await paste(page, t, 'recompute:\n  mode: full\n  full_recompute_layer: [0-3]\n');
  check((await page.textContent('#diff')).includes('full_recompute_layer: [0-3]'), 'and shows an edit made after it');
}

// ---- item 5 ---------------------------------------------------------------------------

async function fit(page, t) {
  await page.click('#fit');
  await page.waitForFunction(() => !/Planning/.test(document.querySelector('#fit-status').textContent) && document.querySelector('#fit-status').textContent);
  await t.idle(page);
  return page.textContent('#fit-status');
}

async function item5Fit(page, base, t) {
  const { check } = t;
  await fresh(page, base, t);
  const mlp = "recompute:\n  mode: select\n  select_module:\n    '.*mlp': [0-31]\n";
  await paste(page, t, mlp);
  // a budget that needs no recompute: the fresh plan drops '.*mlp'
  await page.fill('[data-key="fit/budget"]', '80');
  let status = await fit(page, t);
  check(/fits the budget of 80\.00 GiB/.test(status), `the budget field is used: ${status}`);
  check(/\+0\.0 %/.test(status), `no recompute is needed at 80 GiB: ${status}`);
  check(/'\.\*mlp' 0-31 \(dropped\)/.test(status), `the result line says what changes: ${status}`);
  check(await page.isVisible('#fit-accept') && await page.isVisible('#fit-discard'), 'the proposal can be accepted or discarded');
  check((await page.textContent('.fit-compare')).includes('Your plan'), 'the proposal is shown beside the current plan');
  check(await page.evaluate(() => window.memopt.state.ui.diffBase) === 'proposal', 'the diff view compares with the proposal');
  await page.click('.diff-box summary');
  const removed = await page.$$eval('#diff .dl.del', (xs) => xs.map((x) => x.textContent));
  check(removed.some((l) => l.includes("'.*mlp': [0-31]")), `the diff shows the line the proposal drops: ${JSON.stringify(removed)}`);
  check(await yamlOf(page) === mlp, 'nothing changes before Accept');
  await page.click('#fit-accept');
  await t.idle(page);
  check(!(await yamlOf(page)).includes('.*mlp'), `Accept loads the proposal: ${await yamlOf(page)}`);
  await page.click('#undo');
  await t.idle(page);
  check(await yamlOf(page) === mlp, 'Undo brings the plan back');
  // start from my plan keeps '.*mlp'
  await page.check('[data-key="fit/start/mine"]');
  status = await fit(page, t);
  const mine = await page.evaluate(() => window.memopt.state.fit.proposal && window.memopt.state.fit.proposal.config);
  check(mine && mine.includes('.*mlp'), `starting from my plan keeps its entries: ${status}`);
  await page.click('#fit-discard');
  check(await page.locator('#fit-accept').count() === 0, 'Discard removes the proposal');
  // mechanisms: only full recompute
  await page.check('[data-key="fit/start/fresh"]');
  await page.fill('[data-key="fit/budget"]', '');
  for (const m of ['select', 'exclude', 'comm', 'layer_swap', 'op_swap']) await page.uncheck(`[data-key="fit/allow/${m}"]`);
  const [request] = await Promise.all([page.waitForRequest((r) => r.url().endsWith('/api/v1/plan')), fit(page, t)]);
  const body = JSON.parse(request.postData());
  check(JSON.stringify(body.allow) === '["full"]', `the request carries allow: ${JSON.stringify(body.allow)}`);
  const full = await page.evaluate(() => window.memopt.state.fit.proposal && window.memopt.state.fit.proposal.config);
  check(full && !/select_module|exclude_op|layer_swap|op_swap|enable: True/.test(full) && /full_recompute_layer/.test(full), `the proposal only uses full recompute: ${full}`);
  // after a model switch an invalid plan does not block a fresh fit
  await paste(page, t, 'recompute:\n  mode: full\n  full_recompute_layer: [0-40]\n');
  check(/error/.test(await diagSummary(page)), 'the plan has an error on this model');
  status = await fit(page, t);
  check(/Proposal/.test(status) && !/Fix the errors/.test(status), `a fresh fit works despite the error: ${status}`);
  await page.check('[data-key="fit/start/mine"]');
  status = await fit(page, t);
  check(/fix it or choose "Start fresh"|fix them or choose "Start fresh"/.test(status), `from my plan it says how to go on: ${status}`);
  await t.axe(page, 'fit');
  await t.shot(page, '23-fit');
}

// The headroom (GiB or % below the device's capacity) and the budget follow
// each other; the plan request carries the budget they say, in bytes.
async function item5Headroom(page, base, t) {
  const { check } = t;
  await fresh(page, base, t); // llama2-7b on its device
  const cap = await page.evaluate(() => window.memopt.state.estimate.data.capacity_bytes);
  check(cap > 0, `the estimate gives the device's capacity: ${cap}`);
  const GIB = 2 ** 30;
  const two = (x) => String(Math.round(x * 100) / 100);
  const value = (k) => page.inputValue(`[data-key="fit/${k}"]`);
  const sent = async () => {
    const [request] = await Promise.all([page.waitForRequest((r) => r.url().endsWith('/api/v1/plan')), fit(page, t)]);
    return JSON.parse(request.postData());
  };
  check(await page.inputValue('[data-key="fit/headroom-unit"]') === '%', 'the headroom is in % of the capacity at first');
  // 10 % headroom: the budget is 90 % of the capacity
  await page.fill('[data-key="fit/headroom"]', '10');
  check(await value('budget') === two((cap * 0.9) / GIB), `10 % headroom sets the budget to ${two((cap * 0.9) / GIB)} GiB: ${await value('budget')}`);
  let body = await sent();
  check(body.budget === Math.floor(cap * 0.9), `the request carries the budget in bytes, ${Math.floor(cap * 0.9)}: ${body.budget}`);
  check(new RegExp(`budget of ${(Math.floor(cap * 0.9) / GIB).toFixed(2)} GiB`).test(await page.textContent('#fit-status')), `the result names that budget: ${await page.textContent('#fit-status')}`);
  // the unit: the same budget, its headroom in GiB
  await page.selectOption('[data-key="fit/headroom-unit"]', 'GiB');
  check(await value('headroom') === two((cap - Number(two((cap * 0.9) / GIB)) * GIB) / GIB), `in GiB the headroom is ${await value('headroom')}`);
  check(await value('budget') === two((cap * 0.9) / GIB), 'changing the unit keeps the budget');
  // a budget typed in: the headroom follows
  await page.fill('[data-key="fit/budget"]', '40');
  check(await value('headroom') === two(cap / GIB - 40), `a 40 GiB budget leaves ${two(cap / GIB - 40)} GiB: ${await value('headroom')}`);
  body = await sent();
  check(body.budget === 40 * GIB, `the request carries the typed budget: ${body.budget}`);
  await page.selectOption('[data-key="fit/headroom-unit"]', '%');
  check(await value('headroom') === two((1 - (40 * GIB) / cap) * 100), `and in % ${two((1 - (40 * GIB) / cap) * 100)}: ${await value('headroom')}`);
  // headroom in GiB
  await page.selectOption('[data-key="fit/headroom-unit"]', 'GiB');
  await page.fill('[data-key="fit/headroom"]', '8');
  check(await value('budget') === two((cap - 8 * GIB) / GIB), `8 GiB headroom: budget ${await value('budget')}`);
  body = await sent();
  check(body.budget === cap - 8 * GIB, `the request carries capacity - 8 GiB: ${body.budget} (capacity ${cap})`);
  // a headroom past the capacity is refused with a reason, and nothing is sent
  await page.fill('[data-key="fit/headroom"]', String(Math.ceil(cap / GIB) + 1));
  await page.click('#fit');
  check(/below the capacity/.test(await page.textContent('#fit-status')), `too much headroom says why: ${await page.textContent('#fit-status')}`);
  // emptying the headroom empties the budget: the planner uses the capacity
  await page.fill('[data-key="fit/headroom"]', '');
  check(await value('budget') === '', 'an empty headroom empties the budget');
  body = await sent();
  check(body.budget === undefined, `no budget is sent: ${JSON.stringify(body.budget)}`);
  for (const width of [390, 1280]) {
    await page.setViewportSize({ width, height: 900 });
    await page.waitForTimeout(150);
    await t.axe(page, `headroom ${width}px`);
  }
  await page.locator('#fit-panel').scrollIntoViewIfNeeded();
  await t.shot(page, '26-fit-headroom');
}

// ---- item 6 ---------------------------------------------------------------------------

async function item6KeepText(page, base, t) {
  const { check, ROOT, OUT, MEMOPT } = t;
  await fresh(page, base, t);
  const text = '# my plan\nrecompute:\n  mode: full  # whole layers\n  # the first layers hold the most activations\n  full_recompute_layer: [0-3]\nswap:\n  enable: False\n';
  await paste(page, t, text);
  const hi = page.locator('[data-key="full/0/hi"]');
  await hi.focus();
  await page.keyboard.press('ArrowRight');
  await t.idle(page);
  check(await yamlOf(page) === text.replace('[0-3]', '[0-4]'), `the slider changes its own line only: ${JSON.stringify(await yamlOf(page))}`);
  await page.locator('[data-key="swap/enable"]').check();
  await t.idle(page);
  check(await yamlOf(page) === text.replace('[0-3]', '[0-4]').replace('enable: False', 'enable: True'), `the swap switch changes its own line only: ${JSON.stringify(await yamlOf(page))}`);
  await page.locator('[data-key="swap/enable"]').uncheck();
  await t.idle(page);
  check((await yamlOf(page)).includes('swap:\n  enable: False\n'), 'swap: enable: False stays written');
  // a real training YAML (MindSpore Transformers' pynative DeepSeek config) with a
  // comment inside its recompute section
  const file = join(ROOT, 'tests/data/real-configs/pynative_deepseek4.yaml');
  const training = readFileSync(file, 'utf8');
  await page.setInputFiles('#file', file);
  await page.waitForFunction(() => window.memopt.state.training && window.memopt.state.training.name === 'pynative_deepseek4.yaml');
  await t.idle(page);
  check((await yamlOf(page)).includes('mode: select # selective recomputation'), `the panel shows the section as written: ${await yamlOf(page)}`);
  await page.locator('[data-key="sel/0/r/0/hi"]').focus();
  await page.keyboard.press('ArrowLeft');
  await t.idle(page);
  check((await yamlOf(page)).includes('mode: select # selective recomputation'), 'a slider keeps the comment of another key');
  if (!(await page.isVisible('#diff-base'))) await page.click('.diff-box summary');
  await page.selectOption('#diff-base', 'upload');
  const changed = await page.$$eval('#diff .dl.add, #diff .dl.del', (xs) => xs.map((x) => x.textContent.trim()));
  check(changed.length >= 2 && changed.every((l) => /select_module|layers\.\*|self_attention|mlp/.test(l)), `the diff against the upload shows only the select_module lines: ${JSON.stringify(changed)}`);
  const reason = await page.textContent('#export-reason');
  const [dl] = await Promise.all([page.waitForEvent('download'), (async () => {
    await page.click('#export');
    if (await page.isVisible('#export-confirm')) await page.click('#export-anyway');
  })()]);
  const out = join(OUT, 'pynative_deepseek4.yaml');
  await dl.saveAs(out);
  const exported = readFileSync(out, 'utf8');
  check(exported.includes('  mode: select # selective recomputation\n'), `the export keeps the comment inside the section (${reason})`);
  const kept = training.split('\n').filter((l) => !/^\s{2,}("layers|'|\[)/.test(l) && !/select_module/.test(l));
  const missing = kept.filter((l) => !exported.includes(l));
  check(missing.length === 0, `the export keeps every other line: missing ${JSON.stringify(missing.slice(0, 5))}`);
  check(exported.includes("'self_attention.*'") || exported.includes('[0-14]'), 'the export has the slider\'s change');
  const v = spawnSync(MEMOPT, ['validate', out], { encoding: 'utf8' });
  check(v.status === 0, `memopt validate accepts the exported training YAML (exit ${v.status}): ${v.stdout}${v.stderr}`);
}

// MindSpore Transformers' pynative DeepSeek config with comments added between the
// entries of its select_module and a swap section whose layer_swap and op_swap
// entries have comments between and inside them: a slider rewrites its scalar only.
async function item6EntryComments(page, base, t) {
  const { check, ROOT } = t;
  await fresh(page, base, t);
  const real = readFileSync(join(ROOT, 'tests/data/real-configs/pynative_deepseek4.yaml'), 'utf8');
  const select = '  select_module:\n    "layers.*.self_attention.*": [0-15]\n    "layers.*.mlp.*": [0-9]\n';
  check(real.includes(select), 'the real file has the select_module this test edits');
  const commented = real.replace(select, [
    '  select_module:',
    '    # attention of every layer: it holds the most activations',
    '    "layers.*.self_attention.*": [0-15]  # all 16 decoder layers',
    '    # the MLP of the first ten only',
    '    "layers.*.mlp.*": [0-9]',
    'swap:',
    '  enable: True',
    '  layer_swap:',
    '    # the first layers wait longest for their backward',
    '    - layers: [0-1]  # two layers',
    '    # and two more',
    '    - layers: [3-4]',
    '  op_swap:',
    '    # fc1 of the late layers',
    "    - op_name: '.*linear_fc1'",
    '      # which layers',
    '      layers: [12-13]',
    '',
  ].join('\n'));
  await page.setInputFiles('#file', { name: 'commented_deepseek4.yaml', mimeType: 'application/yaml', buffer: Buffer.from(commented) });
  await page.waitForFunction(() => window.memopt.state.training && window.memopt.state.training.name === 'commented_deepseek4.yaml');
  await t.idle(page);
  const shown = await yamlOf(page);
  check(shown.includes('    # the MLP of the first ten only\n') && shown.includes('    # and two more\n'), `the panel shows the sections with their comments: ${shown}`);
  check(shown === commented, 'the panel holds the whole file as uploaded (the requests carry it whole)');
  // the comment lines this test added inside the sections
  const comments = commented.split('\n').filter((l) => /#/.test(l) && !real.split('\n').includes(l));
  check(comments.length === 8, `the sections have the 8 comment lines added: ${JSON.stringify(comments)}`);
  // a select_module entry: layers.*.mlp.* 0-9 -> 0-8
  await page.locator('[data-key="sel/1/r/0/hi"]').focus();
  await page.keyboard.press('ArrowLeft');
  await t.idle(page);
  let y = await yamlOf(page);
  check(y === shown.replace('"layers.*.mlp.*": [0-9]', '"layers.*.mlp.*": [0-8]'), `the select_module slider changes its value only: ${JSON.stringify(y)}`);
  // a layer_swap entry: 3-4 -> 3-5
  await page.locator('[data-key="ls/1/r/0/hi"]').focus();
  await page.keyboard.press('ArrowRight');
  await t.idle(page);
  y = await yamlOf(page);
  const want = shown.replace('"layers.*.mlp.*": [0-9]', '"layers.*.mlp.*": [0-8]').replace('- layers: [3-4]', '- layers: [3-5]');
  check(y === want, `the layer_swap slider changes its value only: ${JSON.stringify(y)}`);
  // an op_swap entry's layers, by its number field
  await t.setNumber(page, 'os/0/r/0/to', 14);
  await t.idle(page);
  y = await yamlOf(page);
  check(y === want.replace('layers: [12-13]', 'layers: [12-14]'), `the op_swap range changes its value only: ${JSON.stringify(y)}`);
  const lost = comments.filter((c) => !y.includes(c));
  check(lost.length === 0, `every comment of the sections stays: lost ${JSON.stringify(lost)}`);
  // deleting the first layer_swap entry removes its line only
  await page.click('[data-key="ls/0/delete"]');
  await t.idle(page);
  y = await yamlOf(page);
  check(!y.includes('- layers: [0-1]') && y.includes('    # the first layers wait longest for their backward\n    # and two more\n    - layers: [3-5]'),
    `deleting an entry keeps the comments around it: ${JSON.stringify(y)}`);
  await page.click('#undo');
  await t.idle(page);
  check((await yamlOf(page)).includes('- layers: [0-1]  # two layers'), 'Undo brings the entry back with its comment');
}

// ---- item 7 ---------------------------------------------------------------------------

async function item7NewEntries(page, base, t) {
  const { check } = t;
  await fresh(page, base, t);
  await paste(page, t, 'recompute:\n  mode: full\n  full_recompute_layer: [0-11]\n');
  await page.locator('[data-key="swap/enable"]').check();
  await t.idle(page);
  await page.click('[data-key="ls/add"]');
  await t.idle(page);
  check(!/error/.test(await diagSummary(page)), `a new layer_swap entry does not collide: ${await diagSummary(page)} ${await yamlOf(page)}`);
  check((await yamlOf(page)).includes('layers: [12]'), `it starts at the first free layer: ${await yamlOf(page)}`);
  const focused = await page.evaluate(() => {
    const a = document.activeElement;
    return { role: a.getAttribute('role'), now: Number(a.getAttribute('aria-valuenow')), min: Number(a.getAttribute('aria-valuemin')), max: Number(a.getAttribute('aria-valuemax')) };
  });
  check(focused.role === 'slider' && (focused.now < focused.max || focused.now > focused.min), `the focused thumb can move: ${JSON.stringify(focused)}`);
  await page.keyboard.press('ArrowRight');
  await t.idle(page);
  check((await yamlOf(page)).includes('layers: [12-13]'), `an arrow key widens the new range at once: ${await yamlOf(page)}`);
  await page.click('[data-key="sel/add"]');
  await t.idle(page);
  await page.click('[data-key="sel/add"]');
  await t.idle(page);
  const y = await yamlOf(page);
  check(!/error/.test(await diagSummary(page)), `two new select_module patterns do not collide: ${await diagSummary(page)}\n${y}`);
  const pats = await page.$$eval('input.pattern', (xs) => xs.map((x) => x.value));
  check(new Set(pats).size === pats.length, `the new patterns differ: ${JSON.stringify(pats)}`);
  await page.click('[data-key="full/add"]');
  await t.idle(page);
  check(!/error/.test(await diagSummary(page)), `a new full_recompute_layer range does not collide: ${await diagSummary(page)}`);
}

// ---- item 8 ---------------------------------------------------------------------------

async function item8MapColumns(page, base, t) {
  const { check } = t;
  await fresh(page, base, t);
  await paste(page, t, "recompute:\n  mode: select\n  select_module:\n    '.*mlp': [0-3]\n    '.*self_attention': [4-5]\n  exclude_op:\n    '.*linear_proj': [4-5]\nrecompute_comm:\n  enable: True\n  select_module:\n    '.*allgather': [6-7]\nswap:\n  enable: True\n  layer_swap:\n    - layers: [8-9]\n  op_swap:\n    - op_name: '.*linear_fc1'\n      layers: [10-11]\n");
  for (const width of [1280, 1024, 390]) {
    await page.setViewportSize({ width, height: 900 });
    await page.waitForTimeout(150);
    const m = await page.evaluate(() => {
      const wrap = document.querySelector('#map-wrap');
      const w = wrap.getBoundingClientRect();
      const heads = [...document.querySelectorAll('#layer-map thead th')].map((th) => ({ text: th.textContent, right: th.getBoundingClientRect().right }));
      return { hidden: wrap.scrollWidth - wrap.clientWidth, right: w.right, heads };
    });
    check(m.hidden <= 1, `${width} px: the map hides ${m.hidden} px of columns`);
    const cut = m.heads.filter((h) => h.right > m.right + 1).map((h) => h.text);
    check(cut.length === 0, `${width} px: columns out of sight: ${JSON.stringify(cut)}`);
  }
  await page.setViewportSize({ width: 1280, height: 900 });
  check((await t.cellText(page, 10, 'opSwap')).includes('swap'), 'the op swap column shows layer 10');
  await t.shot(page, '24-map-columns');
}

// ---- item 9 ---------------------------------------------------------------------------

async function item9Feedback(page, base, t) {
  const { check } = t;
  // a plain http:// origin that is not localhost: no Clipboard API
  await page.addInitScript(() => {
    if (!window.location.hash.includes('insecure')) return;
    Object.defineProperty(window, 'isSecureContext', { value: false });
    Object.defineProperty(Navigator.prototype, 'clipboard', { get: () => undefined });
  });
  await page.goto('about:blank');
  await page.goto(`${base}#insecure`);
  await t.idle(page);
  check(await page.evaluate(() => navigator.clipboard === undefined), 'the page has no Clipboard API');
  await page.click('#copy');
  await page.waitForFunction(() => document.querySelector('#copy-status').textContent.trim());
  check(await page.isVisible('#copy-status'), 'copying says what happened, visibly');
  const said = await page.textContent('#copy-status');
  check(/Copied|Ctrl\+C/.test(said), `copy feedback: ${said}`);
  if (/Ctrl\+C/.test(said)) check(await page.isVisible('.copy-manual'), 'the text to copy by hand is shown');
  await page.click('#share');
  await page.waitForFunction(() => document.querySelector('#share-status').textContent.trim());
  check(await page.isVisible('#share-status'), 'copying the share link says what happened');
  await t.axe(page, 'copy-feedback');
  // a broken share link
  const broken = '#s=q1ZKzs8rSc0rUbIqKSpN1VFKTEnJzEvMUbJSqlaKTy0uyczPA';
  await page.goto('about:blank');
  await page.goto(`${base}${broken}`);
  await t.idle(page);
  await page.waitForTimeout(500);
  check(await page.isVisible('#notice'), 'a broken share link is announced');
  check(/share link/.test(await page.textContent('#notice')), `the notice says what: ${await page.textContent('#notice')}`);
  check(await page.evaluate(() => location.hash) === broken, 'the broken link stays in the address bar');
  await t.axe(page, 'broken-link');
  await paste(page, t, 'recompute:\n  mode: full\n  full_recompute_layer: [0-1]\n');
  await page.waitForTimeout(400);
  check(await page.evaluate(() => location.hash) !== broken, 'an edit writes a new link');
}

// ---- item 10 --------------------------------------------------------------------------

async function item10Small(page, base, t) {
  const { check, ROOT } = t;
  await fresh(page, base, t);
  // the Devices placeholder fits its field
  const fits = await page.$eval('[data-key="par/world_size"]', (input) => {
    const cs = getComputedStyle(input);
    const ctx = document.createElement('canvas').getContext('2d');
    ctx.font = `${cs.fontSize} ${cs.fontFamily}`;
    const room = input.clientWidth - parseFloat(cs.paddingLeft) - parseFloat(cs.paddingRight) - 18; // spin buttons
    return { need: ctx.measureText(input.placeholder).width, room };
  });
  check(fits.need <= fits.room, `the Devices placeholder fits: ${JSON.stringify(fits)}`);
  // layer buttons are one Tab stop; arrows move between them
  const stops = await page.$$eval('.layer-btn', (bs) => bs.filter((b) => b.tabIndex === 0).length);
  check(stops === 1, `the layer buttons are ${stops} Tab stops`);
  await page.locator('[data-key="map/0"]').focus();
  await page.keyboard.press('ArrowDown');
  check(await page.evaluate(() => document.activeElement.dataset.key) === 'map/1', 'ArrowDown moves to layer 1');
  // touch targets: slider thumbs and layer buttons at least 24 px
  await paste(page, t, 'recompute:\n  mode: full\n  full_recompute_layer: [0-3]\n');
  const sizes = await page.evaluate(() => [...document.querySelectorAll('.rs-thumb, .layer-btn, button.small')].slice(0, 40)
    .map((n) => n.getBoundingClientRect()).map((r) => [Math.round(r.width), Math.round(r.height)]));
  const small = sizes.filter(([w, h]) => w < 24 || h < 24);
  check(small.length === 0, `targets under 24 px: ${JSON.stringify(small.slice(0, 5))}`);
  // the per-layer table is reachable by keyboard
  await page.click('[data-key="mtab/layers"]');
  check(await page.$eval('.players-wrap', (w) => w.tabIndex) === 0, 'the per-layer table is a Tab stop');
  await page.click('[data-key="mtab/stages"]');
  // the memory panel stays (marked) while the config has an error
  await paste(page, t, 'recompute:\n  mode: full\n  full_recompute_layer: [0-40]\n');
  check(await page.locator('#peak-figure').count() === 1, 'the memory figures stay while the config has an error');
  check(await page.isVisible('#memory-stale'), 'and say they are of the last valid config');
  // the map does not jump while a drag passes through a conflict
  await paste(page, t, 'recompute:\n  mode: full\n  full_recompute_layer: [0-5]\nswap:\n  enable: True\n  layer_swap:\n    - layers: [8-9]\n');
  const thumb = await page.locator('[data-key="full/0/hi"]').boundingBox();
  const track = await page.locator('[data-key="full/0/hi"]').evaluate((n) => n.parentNode.getBoundingClientRect().toJSON());
  const tops = [];
  await page.mouse.move(thumb.x + thumb.width / 2, thumb.y + thumb.height / 2);
  await page.mouse.down();
  for (const l of [6, 7, 8, 9, 10, 12, 9, 7]) {
    await page.mouse.move(track.x + (l / 31) * track.width + 2, thumb.y + thumb.height / 2, { steps: 2 });
    await t.idle(page);
    tops.push(await page.$eval('#map-wrap', (w) => w.getBoundingClientRect().top + window.scrollY));
  }
  await page.mouse.up();
  await t.idle(page);
  check(Math.max(...tops) - Math.min(...tops) <= 1, `the layer map stays in place during the drag: tops ${JSON.stringify(tops.map(Math.round))}`);
  // a model that shards over every device, without a device count
  const responses = [];
  const onResponse = (r) => { if (r.url().includes('/api/v1/estimate')) responses.push(r.status()); };
  page.on('response', onResponse);
  await page.setInputFiles('#file', join(ROOT, 'tests/data/real-configs/pynative_ds3.yaml'));
  await page.waitForFunction(() => window.memopt.state.model.label === 'pynative_ds3.yaml');
  await t.idle(page);
  await page.locator('[data-key="mode/full"]').check();
  await t.idle(page);
  check(!responses.includes(422), `no 422 while the device count is unknown: ${JSON.stringify(responses)}`);
  const mem = await page.textContent('#memory');
  check(/Devices field/.test(mem) && !/--devices/.test(mem), `the memory panel points at the Devices field: ${mem}`);
  check(!/shard -1/.test(await page.textContent('#parallel .derived')), `no "FSDP shard -1": ${await page.textContent('#parallel .derived')}`);
  await page.click('#memory button.link');
  check(await page.evaluate(() => document.activeElement.dataset.key) === 'par/world_size', 'the link focuses the Devices field');
  await t.setNumber(page, 'par/world_size', 64);
  await t.idle(page);
  check(await page.locator('#peak-figure').count() === 1, 'with 64 devices the estimate is shown');
  page.off('response', onResponse);
  await t.axe(page, 'small-items');
}

// ---- the layer strip ------------------------------------------------------------------------

async function dragLane(page, col, from, to, n) {
  // the mouse reaches only what is in view
  await page.locator(`.strip-lane[data-col="${col}"] .strip-cells`).scrollIntoViewIfNeeded();
  const box = await page.locator(`.strip-lane[data-col="${col}"] .strip-cells`).boundingBox();
  const x = (l) => box.x + ((l + 0.5) / n) * box.width;
  const y = box.y + box.height / 2;
  await page.mouse.move(x(from), y);
  await page.mouse.down();
  await page.mouse.move(x((from + to) / 2), y, { steps: 3 });
  await page.mouse.move(x(to), y, { steps: 3 });
  await page.mouse.up();
}

async function stripPaint(page, base, t) {
  const { check } = t;
  await fresh(page, base, t);
  await paste(page, t, 'recompute:\n  mode: full\n  full_recompute_layer: [0-1]\nswap:\n  enable: True\n');
  // the mouse adds a range, starting on a named layer removes one
  await dragLane(page, 'full', 4, 7, 32);
  await t.idle(page);
  check((await yamlOf(page)).includes('full_recompute_layer: [0-1, 4-7]'), `a drag adds layers 4-7: ${await yamlOf(page)}`);
  await dragLane(page, 'full', 5, 6, 32);
  await t.idle(page);
  check((await yamlOf(page)).includes('full_recompute_layer: [0-1, 4, 7]'), `a drag from a named layer removes 5-6: ${await yamlOf(page)}`);
  await page.click('#undo');
  await t.idle(page);
  check((await yamlOf(page)).includes('[0-1, 4-7]'), 'painting is undoable');
  // the keyboard: a lane is a slider; Shift+arrows select, Space paints
  const lane = page.locator('[data-key="strip/layerSwap"]');
  await lane.focus();
  for (let i = 0; i < 20; i += 1) await page.keyboard.press('ArrowRight');
  for (let i = 0; i < 3; i += 1) await page.keyboard.press('Shift+ArrowRight');
  check(/selected layers 20-23/.test(await lane.getAttribute('aria-valuetext')), `the selection is announced: ${await lane.getAttribute('aria-valuetext')}`);
  await page.keyboard.press('Space');
  await t.idle(page);
  check((await yamlOf(page)).includes('layers: [20-23]'), `Space paints layer_swap 20-23: ${await yamlOf(page)}`);
  check(!/error/.test(await diagSummary(page)), 'no conflict');
  // a conflict shows on the strip
  await dragLane(page, 'layerSwap', 0, 1, 32);
  await t.idle(page);
  const marked = await page.$$eval('.strip-lane[data-col="layerSwap"] .sc.flag-error', (xs) => xs.map((x) => Number(x.dataset.layer)));
  check(JSON.stringify(marked) === '[0,1]', `the recompute/swap conflict is marked on layers 0-1 of the strip: ${JSON.stringify(marked)}`);
  // 128 layers: every lane holds every layer inside the panel, at 390 px too
  const m = await (await fetch(`${base}api/v1/presets/llama2-7b`)).json();
  m.model.num_layers = 128;
  await page.setInputFiles('#file', { name: 'big128.json', mimeType: 'application/json', buffer: Buffer.from(JSON.stringify(m)) });
  await page.waitForFunction(() => window.memopt.state.model.label === 'big128.json');
  await t.idle(page);
  for (const width of [1280, 390]) {
    await page.setViewportSize({ width, height: 900 });
    await page.waitForTimeout(150);
    const s = await page.evaluate(() => [...document.querySelectorAll('.strip-cells')].map((c) => {
      const r = c.getBoundingClientRect();
      const last = c.lastElementChild.getBoundingClientRect();
      return { n: c.children.length, inside: last.right <= r.right + 0.5 && last.width > 0 };
    }));
    check(s.length >= 4 && s.every((x) => x.n === 128 && x.inside), `${width} px: every lane shows 128 layers: ${JSON.stringify(s)}`);
  }
  await page.setViewportSize({ width: 1280, height: 900 });
  await t.axe(page, 'strip');
}
