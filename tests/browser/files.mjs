// Browser tests: the page reads files the way the CLI does. Real MindSpore
// Transformers files (tests/data/mindformers/SOURCES.tsv gives repository,
// path and commit); what each one says was read from the file:
//  - master/finetune_llama3_1_8b.yaml (research/llama3_1/llama3_1_8b at
//    f52743ca): graph mode (context.mode 0, line 99), 32 layers on one
//    stage, recompute_config (lines 81-86) `recompute: True` -> layers 0-31
//    recomputed in full; recompute_slice_activation True (line 86).
//  - r1.5.0/finetune_deepseek3_671b.yaml (research/deepseek3 at ece44cc4):
//    graph mode with a recompute_config.
//  - master/finetune_qwen3.yaml (configs/qwen3 at f52743ca): no layer count
//    in model.model_config (line 132); the model is read by the run from
//    pretrained_model_dir "/path/to/Qwen3-32B" (line 12).
// The page must agree with `memopt estimate --json` on the same file (run
// here): the same peak, every warning the CLI gives.
import { spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

const LLAMA = 'tests/data/mindformers/master/finetune_llama3_1_8b.yaml';
const DSV3 = 'tests/data/mindformers/r1.5.0/finetune_deepseek3_671b.yaml';
const QWEN3 = 'tests/data/mindformers/master/finetune_qwen3.yaml';
const HF = 'tests/api/fixtures/hf-config.json';
// configs/telechat3 at f52743ca: pipeline_stage 8 (line 117), 45 layers
// (num_hidden_layers, line 167) and offset 0 (line 160): 45 = 8 x 5 + 5, five
// layers no stage takes; MindSpore Transformers refuses such an offset
const TELECHAT3 = 'tests/data/mindformers/master/pretrain_telechat3_105b_a4b_4k.yaml';

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

// The page's headline peak in bytes (its estimate answer) and its text.
async function pagePeak(page) {
  return page.evaluate(() => {
    const e = window.memopt.state.estimate;
    return { bytes: e && e.ok && e.data ? e.data.peak_bytes : null, text: (document.querySelector('#peak-figure') || {}).textContent || '' };
  });
}

async function graphMode(page, base, t, file) {
  const { check } = t;
  t.setStep(`files: ${file} priced as the CLI prices it`);
  await fresh(page, base, t);
  await upload(page, t, file);
  const want = cli(t, ['estimate', '--json', file]);
  const got = await pagePeak(page);
  check(got.bytes === want.peak_bytes, `the page's peak ${got.bytes} (${got.text}) is the CLI's ${want.peak_bytes}`);
  const gib = (want.peak_bytes / 2 ** 30).toFixed(2);
  check(got.text.includes(gib), `the headline shows ${gib} GiB: ${got.text}`);
  const findings = await page.textContent('#diags');
  for (const w of want.warnings) {
    check(findings.includes(w.message), `the findings show the CLI's ${w.code} warning (${w.path}): ${w.message.slice(0, 80)}`);
  }
  return want;
}

// How far to trust the figure: the measured runs of the rules in use (the
// rows of api/accuracy.tsv, from tests/calibration and the Megatron
// figures), the values the import assumed and what the estimate leaves out,
// as the CLI's JSON gives them.
async function trustSignals(page, t, cli) {
  const { check } = t;
  t.setStep('files: trust signals');
  const rows = readFileSync(join(t.ROOT, 'api/accuracy.tsv'), 'utf8').split('\n').filter((l) => l.startsWith(`${cli.framework}\t`));
  check(cli.accuracy && cli.accuracy.runs.length === rows.length && rows.length > 0,
    `the CLI's JSON has the ${rows.length} measured runs of the ${cli.framework} rules: ${cli.accuracy && cli.accuracy.runs.length}`);
  await page.click('#trust summary');
  const text = await page.textContent('#trust');
  check(new RegExp(`Measured accuracy of the ${cli.framework} rules: median error [0-9.]+\\s?% on ${rows.length} runs`).test(text), `the page says how the rules did: ${text.slice(0, 200)}`);
  check(await page.locator('#trust .trust-runs tbody tr').count() === rows.length, 'one row a measured run');
  const worst = cli.accuracy.worst_run;
  check(text.includes(worst), `the worst run is named: ${worst}`);
  for (const a of cli.assumed) check(text.includes(`${a.path} = ${a.value}`), `the assumed ${a.path} = ${a.value} is listed`);
  for (const w of cli.warnings.filter((x) => x.code === 'unmodelled')) check(text.includes(w.path), `left out: ${w.path}`);
  await t.axe(page, 'trust signals');
}

// DeepSeek-V3 671B: fifteen out-of-memory stages and the model's findings
// make long lists; axe clean at every width (a list cut to its height
// scrolls, so the keyboard must reach it).
async function deepseekWidths(page, base, t) {
  await graphMode(page, base, t, DSV3);
  t.setStep('files: DeepSeek-V3 671B at every width');
  try {
    for (const width of [1280, 1920, 390, 360]) {
      await page.setViewportSize({ width, height: 900 });
      await t.axe(page, `DeepSeek-V3 ${width}px`);
    }
  } finally {
    await page.setViewportSize({ width: 1280, height: 900 });
  }
}

async function llamaGraph(page, base, t) {
  const { check } = t;
  const want = await graphMode(page, base, t, LLAMA);
  const full = await page.$$eval('#layer-map tbody tr', (trs) => trs.filter((tr) => /recompute/.test((tr.querySelector('td[data-col="full"]') || {}).textContent || '')).length);
  check(full === 32, `recompute_config recompute: True recomputes all 32 layers on the map: ${full}`);
  await trustSignals(page, t, want);
  check(/finetune_llama3_1_8b\.yaml/.test(await page.textContent('#model-label')), `the model is the file's: ${await page.textContent('#model-label')}`);
  await t.axe(page, 'graph-mode file');
  await t.shot(page, 'files-graph-mode');

  t.setStep('files: a graph-mode file asks for the migration before an edit');
  const text = await page.inputValue('#yaml-text');
  check(await page.locator('#migrate-accept').isVisible(), 'the migration is offered');
  await page.click('[data-key="mode/select"]');
  await t.idle(page);
  check(await page.inputValue('#yaml-text') === text, 'the edit is not made: the text is the file as uploaded');
  check(/migrate it first/.test(await page.textContent('#migrate-status')), `the page says to migrate first: ${await page.textContent('#migrate-status')}`);
}

// A training YAML whose model has an error: the CLI reads it whole and
// prices nothing; the page did keep the model shown before (llama2-7b) and
// its YAML, and priced that (64.56 GiB, out of memory) under the file's name.
async function modelErrors(page, base, t) {
  const { check } = t;
  t.setStep('files: a training YAML whose model has an error prices nothing');
  await fresh(page, base, t);
  const calls = [];
  const listen = (rq) => { if (/\/api\/v1\/(estimate|expand|plan)$/.test(rq.url())) calls.push(rq.url()); };
  page.on('request', listen);
  await page.setInputFiles('#file', join(t.ROOT, TELECHAT3));
  await page.waitForFunction(() => window.memopt.state.training && window.memopt.state.training.name === 'pretrain_telechat3_105b_a4b_4k.yaml', null, { timeout: 10000 }).catch(() => {});
  await t.idle(page);
  page.off('request', listen);
  const want = cli(t, ['estimate', '--json', TELECHAT3]);
  const err = (want.errors || []).find((d) => d.code === 'parallel');
  check(want.valid === false && err && err.line === 160 && want.peak_bytes === undefined, `the CLI: a parallel error at line 160, no figure (${JSON.stringify(err)})`);
  const label = await page.textContent('#model-label');
  check(!/llama2-7b/.test(label) && /model errors/.test(label), `the model shown before is not kept: ${label}`);
  check(await page.inputValue('#yaml-text') === readFileSync(join(t.ROOT, TELECHAT3), 'utf8'), 'the YAML panel holds the whole file');
  check(await page.locator('#peak-figure').count() === 0 && calls.length === 0, `no figure, nothing priced (${calls.length} estimate/expand/plan requests)`);
  const codes = await page.$$eval('#diags .diag code.code, #diags .diag code', (cs) => [...new Set(cs.map((c) => c.textContent.trim()))]);
  for (const d of [...want.errors, ...want.warnings]) check(codes.includes(d.code), `the findings have the CLI's ${d.code}: ${codes.join(' ')}`);
  const diags = await page.textContent('#diags');
  check(/1 error/.test(diags) && /YAML line 160, column 13/.test(diags), `the error at the file's line 160: ${diags.slice(0, 300)}`);
  await t.axe(page, 'model errors');
}

async function modelNeeded(page, base, t) {
  const { check } = t;
  t.setStep('files: a training YAML without a model is model-needed');
  await fresh(page, base, t);
  const calls = [];
  const listen = (rq) => { if (/\/api\/v1\/(estimate|expand|plan)$/.test(rq.url())) calls.push(rq.postData() || ''); };
  page.on('request', listen);
  t.allowStatus(422); // the import's answer: the file has no model
  await upload(page, t, QWEN3);
  t.allowStatus(null);
  page.off('request', listen);
  const label = await page.textContent('#model-label');
  check(!/llama2-7b/.test(label), `the last model shown is not kept: ${label}`);
  check(/model-needed/.test(label), `the label says model-needed: ${label}`);
  const needed = await page.textContent('#diags');
  check(/model-needed/.test(needed) && /\/path\/to\/Qwen3-32B\/config\.json/.test(needed), `Findings say what to upload: ${needed.slice(0, 300)}`);
  check(!/--model|--devices|API:/.test(needed), `in the page's words, no command-line flag or request member: ${needed.slice(0, 400)}`);
  check(await page.locator('#memory-model-needed').count() === 1, 'the memory panel says model-needed, with no figure');
  check(await page.locator('#peak-figure').count() === 0, 'no peak is shown');
  check(calls.length === 0, `nothing is priced while no model is given: ${calls.length} estimate/expand/plan requests`);
  await t.axe(page, 'model-needed');
  await t.shot(page, 'files-model-needed');

  t.setStep('files: the model given for the model-less file');
  await page.setInputFiles('#file', join(t.ROOT, HF));
  await page.waitForFunction(() => window.memopt.state.model.label === 'hf-config.json');
  await t.idle(page);
  check(await page.evaluate(() => window.memopt.state.training && window.memopt.state.training.name) === 'finetune_qwen3.yaml', 'the training file stays');
  const want = cli(t, ['estimate', '--json', '--model', HF, QWEN3]);
  const got = await pagePeak(page);
  check(got.bytes === want.peak_bytes, `priced as the CLI with --model ${HF}: ${got.bytes} vs ${want.peak_bytes}`);
}

async function serverExport(page, base, t) {
  const { check } = t;
  t.setStep('files: the download is the server\'s export');
  await fresh(page, base, t);
  const text = 'recompute:\n  mode: full   # every layer\n  full_recompute_layer: [0-15, 16-31]\n';
  await page.fill('#yaml-text', text);
  await t.idle(page);
  // the server's answer is marked on its way: the file downloaded must be that answer
  const mark = '# exported by the server\n';
  let asked = null;
  await page.route('**/api/v1/export', async (route) => {
    asked = JSON.parse(route.request().postData());
    const res = await route.fetch();
    const body = await res.json();
    await route.fulfill({ response: res, json: { ...body, yaml: mark + body.yaml } });
  });
  const [dl] = await Promise.all([page.waitForEvent('download', { timeout: 10000 }), page.click('#export')]);
  const got = readFileSync(await dl.path(), 'utf8');
  await page.unroute('**/api/v1/export');
  check(got === mark + text, `the file downloaded is POST /export's answer (as written, comment kept): ${JSON.stringify(got)}`);
  check(asked && asked.config === text && asked.form === 'as-written', `the request asks for the text as written: ${JSON.stringify(asked)}`);
  const canon = await (await fetch(`${base}api/v1/export`, {
    method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ config: text, model: 'llama2-7b' }),
  })).json();
  check(canon.yaml === 'recompute:\n  mode: full\n  full_recompute_layer: [0-31]\n', `the canonical form merges the ranges: ${JSON.stringify(canon.yaml)}`);
}

async function deviceList(page, base, t) {
  const { check } = t;
  t.setStep('files: the device list is the server\'s');
  await fresh(page, base, t);
  const pr = await (await fetch(`${base}api/v1/presets`)).json();
  const names = (pr.devices || []).map((d) => d.name);
  check(names.length > 0, `GET /api/v1/presets lists the devices: ${JSON.stringify(pr.devices)}`);
  const options = await page.$$eval('[data-key="par/device"] option', (os) => os.map((o) => [o.value, o.textContent]));
  check(JSON.stringify(options.map((o) => o[0])) === JSON.stringify(names),
    `the device select offers the server's devices ${JSON.stringify(names)}: ${JSON.stringify(options)}`);
  for (const d of pr.devices || []) {
    const o = options.find((x) => x[0] === d.name);
    check(o && o[1].includes(`${d.memory_gib} GiB`), `${d.name} is shown with the server's ${d.memory_gib} GiB: ${o && o[1]}`);
  }
}

async function emptyFile(page, base, t) {
  const { check } = t;
  t.setStep('files: an empty file is refused');
  await fresh(page, base, t);
  await page.setInputFiles('#file', { name: 'empty.yaml', mimeType: 'application/yaml', buffer: Buffer.from('') });
  await page.waitForFunction(() => document.querySelector('#upload-status').textContent !== '');
  const s = await page.textContent('#upload-status');
  check(/error/.test(s) && /empty/.test(s) && !/✓/.test(s), `an empty file gets an error, not a tick: ${s}`);
}

// Settings that do nothing (mode None with a full range, a swap list with
// swap disabled): the core's no-effect warning, with its fix, on the page.
async function noEffect(page, base, t) {
  const { check } = t;
  t.setStep('files: a list that does nothing says so, with its fix');
  await fresh(page, base, t);
  await page.fill('#yaml-text', 'recompute:\n  mode: None\n  full_recompute_layer: [0-3]\nswap:\n  enable: False\n  layer_swap:\n    - layers: [8-9]\n');
  await t.idle(page);
  const items = await page.$$eval('#diags li[data-code="no-effect"]', (lis) => lis.map((li) => li.textContent));
  check(items.length === 2, `two no-effect findings: ${JSON.stringify(items)}`);
  check(items.some((x) => /full_recompute_layer does nothing/.test(x) && /set mode: full/.test(x)), `the full range, with "set mode: full": ${items[0]}`);
  check(items.some((x) => /layer_swap does nothing/.test(x) && /set enable: True/.test(x)), `the layer_swap list, with "set enable: True": ${items[1]}`);
  check(!/✓ valid$/.test(await page.textContent('#diag-summary')), `the summary counts the warnings: ${await page.textContent('#diag-summary')}`);
  check(await page.locator('[data-target="mode"].flag-warning, [data-target="mode"] .flag').count() > 0, 'the recompute mode control is flagged');
  await t.axe(page, 'no-effect');
}

// One keyboard step of a range slider on a 128-layer model in 8 pipeline
// stages: the bytes on the wire (the encoded length of every answer, as
// Chromium received it), at most 64 KiB a step; written to
// test-output/slider-wire.json for bench/browser.sh.
async function sliderWire(page, base, t) {
  const { check } = t;
  t.setStep('files: one slider step on a 128-layer, 8-stage model is light');
  await fresh(page, base, t);
  const m = await (await fetch(`${base}api/v1/presets/llama2-7b`)).json();
  m.model.num_layers = 128;
  Object.assign(m.parallel, { world_size: 64, pipeline_parallel: 8, data_parallel: 8, data_parallel_shard: 8 });
  await page.setInputFiles('#file', { name: 'big-pp8.json', mimeType: 'application/json', buffer: Buffer.from(JSON.stringify(m)) });
  await page.waitForFunction(() => window.memopt.state.model.label === 'big-pp8.json');
  await t.idle(page);
  await page.fill('#yaml-text', 'recompute:\n  mode: full\n  full_recompute_layer: [0-10]\n');
  await t.idle(page);
  const cdp = await page.context().newCDPSession(page);
  await cdp.send('Network.enable');
  const urls = new Map();
  let bytes = 0;
  cdp.on('Network.requestWillBeSent', (e) => urls.set(e.requestId, e.request.url));
  cdp.on('Network.loadingFinished', (e) => { if (/\/api\//.test(urls.get(e.requestId) || '')) bytes += e.encodedDataLength; });
  const thumb = page.locator('[data-key="full/0/hi"]');
  await thumb.focus();
  const steps = [];
  for (let i = 0; i < 6; i += 1) {
    bytes = 0;
    await page.keyboard.press(i % 2 ? 'ArrowLeft' : 'ArrowRight');
    await t.idle(page);
    await new Promise((r) => setTimeout(r, 50)); // the last loadingFinished event
    steps.push(bytes);
  }
  await cdp.detach();
  const max = Math.max(...steps);
  t.log(`slider step on 128 layers, 8 stages: ${steps.join(', ')} bytes on the wire (max ${max})`);
  writeFileSync(join(t.OUT || join(t.ROOT, 'test-output'), 'slider-wire.json'), JSON.stringify({ steps, max_bytes: max, limit_bytes: 65536 }));
  check(steps.every((b) => b > 0), 'every step asked the server');
  check(max <= 65536, `at most 64 KiB a step: ${max} bytes`);
  check(await page.evaluate(() => window.memopt.state.estimate.data.stages.length) === 8, 'the estimate has 8 stages');
}

// Stage labels under VPP: 16 layers, PP 2, VPP 2 are four chunks of four
// layers dealt round the stages (Megatron's and MindSpore's interleaved
// schedule): stage 0 holds 0-3 and 8-11, stage 1 holds 4-7 and 12-15.
async function vppLabels(page, base, t) {
  const { check } = t;
  t.setStep('files: stage labels under VPP');
  await fresh(page, base, t);
  const m = await (await fetch(`${base}api/v1/presets/llama2-7b`)).json();
  m.model.num_layers = 16;
  Object.assign(m.parallel, { world_size: 16, pipeline_parallel: 2, virtual_pipeline: 2, data_parallel: 8, data_parallel_shard: 8 });
  await page.setInputFiles('#file', { name: 'vpp.json', mimeType: 'application/json', buffer: Buffer.from(JSON.stringify(m)) });
  await page.waitForFunction(() => window.memopt.state.model.label === 'vpp.json');
  await t.idle(page);
  const text = await page.textContent('#memory');
  check(/Stage 0\s*layers 0-3, 8-11/.test(text), `stage 0 holds 0-3 and 8-11: ${text.slice(0, 300)}`);
  check(/Stage 1\s*layers 4-7, 12-15/.test(text), `stage 1 holds 4-7 and 12-15: ${text.slice(0, 300)}`);
}

// The server goes away (every API request fails as a refused connection
// does): a plain message with a retry, the last valid text still
// downloadable; when it is back the page recovers by itself.
async function serverGone(page, base, t) {
  const { check } = t;
  t.setStep('files: the server goes away and comes back');
  await fresh(page, base, t);
  const valid = 'recompute:\n  mode: full\n  full_recompute_layer: [0-7]\n';
  await page.fill('#yaml-text', valid);
  await t.idle(page);
  t.allowStatus('net::ERR_');
  await page.route('**/api/**', (route) => route.abort('connectionrefused'));
  await page.fill('#yaml-text', `${valid}  # edited while the server is away\n`);
  await page.waitForSelector('#offline', { timeout: 15000 });
  const text = await page.textContent('#diags');
  check(!/TypeError|Failed to fetch/.test(text), `no browser internals in the message: ${text.slice(0, 200)}`);
  check(/does not answer/.test(text) && await page.locator('#retry').isVisible(), 'it says the server does not answer, with Retry now');
  check(!(await page.isDisabled('#export')), 'Download stays possible');
  const [dl] = await Promise.all([page.waitForEvent('download', { timeout: 10000 }), page.click('#export')]);
  check(readFileSync(await dl.path(), 'utf8') === valid, 'the download is the last text the server checked valid');
  await t.axe(page, 'server gone');
  await t.shot(page, 'files-server-gone');
  await page.unroute('**/api/**');
  t.allowStatus(null);
  await page.waitForSelector('#offline', { state: 'detached', timeout: 15000 });
  await t.idle(page);
  check(/valid/.test(await page.textContent('#diag-summary')), `back: the edited text is checked: ${await page.textContent('#diag-summary')}`);
}

// The headline tells the truth: a config with an error has no figure of
// its own, and the last valid one is labelled as such, never a ticked Peak.
async function honestHeadline(page, base, t) {
  const { check } = t;
  t.setStep('files: an honest headline');
  await fresh(page, base, t);
  await page.fill('#yaml-text', 'recompute:\n  mode: full\n  full_recompute_layer: [0-7]\n');
  await t.idle(page);
  check(/^✓ Peak/.test(await page.textContent('#peak-figure')), 'a valid config: ✓ Peak');
  await page.fill('#yaml-text', 'recompute:\n  mode: full\n  full_recompute_layer: [0-99]\n');
  await t.idle(page);
  const head = await page.textContent('#peak-figure');
  check(!/✓/.test(head) && /^Last valid plan: peak/.test(head), `with an error the headline is the last valid plan's, unticked: ${head}`);
  check(await page.locator('#peak-figure.stale-figure').count() === 1, 'and styled as such');
}

// A phone: the result comes first, long names wrap.
async function phone(page, base, t) {
  const { check } = t;
  t.setStep('files: a phone (390 px)');
  await page.setViewportSize({ width: 390, height: 800 });
  try {
    await fresh(page, base, t);
    const long = `${'a_very_long_model_file_name_from_a_pipeline_'.repeat(4)}config.json`;
    await page.setInputFiles('#file', { name: long, mimeType: 'application/json', buffer: readFileSync(join(t.ROOT, HF)) });
    await page.waitForFunction((n) => window.memopt.state.model.label === n, long);
    await t.idle(page);
    const wide = await page.evaluate(() => document.documentElement.scrollWidth);
    check(wide <= 390, `a ${long.length}-character file name does not widen the page: ${wide} px`);
    const tops = await page.evaluate(() => ['#memory', '#diags', '#plan'].map((q) => document.querySelector(q).getBoundingClientRect().top + window.scrollY));
    check(tops[0] < tops[2] && tops[1] < tops[2], `the findings and the memory come before the plan controls: ${JSON.stringify(tops)}`);
    check(tops[0] < 1000, `the memory headline is within the first screens: ${tops[0]} px down`);
    await t.axe(page, 'phone');
    await t.shot(page, 'files-phone');
  } finally {
    await page.setViewportSize({ width: 1280, height: 900 });
  }
}

// Per-layer memory on the layer map: each type cell says what the layer
// keeps for one micro-batch, the CLI's per-layer figure for the same
// config; a recomputed layer keeps less than one that is not.
async function mapMemory(page, base, t) {
  const { check } = t;
  t.setStep('files: per-layer memory on the layer map');
  await fresh(page, base, t);
  const config = 'recompute:\n  mode: full\n  full_recompute_layer: [0-7]\n';
  await page.fill('#yaml-text', config);
  await t.idle(page);
  const tmp = join(t.OUT || join(t.ROOT, 'test-output'), 'map-memory.yaml');
  writeFileSync(tmp, config);
  const want = cli(t, ['estimate', '--json', '--model', 'llama2-7b', tmp]).layers;
  const cells = await page.$$eval('#layer-map tbody td.type', (tds) => tds.map((td) => ({ mem: td.classList.contains('mem'), text: td.textContent, bar: td.style.getPropertyValue('--mem') })));
  check(cells.length === 32 && cells.every((c) => c.mem), 'every layer has its memory bar');
  for (const l of [0, 8]) {
    const mib = want[l].activation_bytes / 1048576;
    const txt = `keeps ${mib.toFixed(mib < 10 ? 2 : 0)} MiB a micro-batch`;
    check(cells[l].text.includes(txt), `layer ${l} ${txt} (the CLI's): ${cells[l].text}`);
  }
  check(parseFloat(cells[0].bar) < parseFloat(cells[8].bar), `the recomputed layer 0's bar (${cells[0].bar}) is shorter than layer 8's (${cells[8].bar})`);
  await t.axe(page, 'map memory');
}

// A training YAML whose model is elsewhere, given a model apart: the core
// reads the file's run (parallel_config) over that model. The golden case
// tests/golden/valid/recompute-config-on-model-given: its config.yaml
// writes parallel_config data_parallel 2 (line 16), model_parallel 2 (line
// 17), pipeline_stage 2 (line 18), micro_batch_num 4 (line 19); its model is
// hf.json (8 layers). The fields must show the layout the API priced (the
// estimate answer's run), say which value is the file's (file, key, line),
// and the peak must be the CLI's for the same two files.
const RUN_CASE = 'tests/golden/valid/recompute-config-on-model-given';

async function fieldState(page, key) {
  return page.$eval(`#parallel [data-key="par/${key}"]`, (n) => {
    const ids = (n.getAttribute('aria-describedby') || '').split(' ').filter(Boolean);
    return {
      value: n.type === 'checkbox' ? n.checked : n.value, readOnly: n.readOnly || n.disabled, source: n.dataset.source,
      described: ids.map((id) => (document.getElementById(id) || {}).textContent || '').join(' '),
    };
  });
}

async function pricedRun(page, base, t) {
  const { check } = t;
  const yaml = `${RUN_CASE}/config.yaml`;
  const hf = `${RUN_CASE}/hf.json`;
  t.setStep('files: a training YAML\'s run over the model given: the fields show what is priced');
  await fresh(page, base, t);
  t.allowStatus(422); // the import's answer: the file has no model of its own
  await upload(page, t, yaml);
  t.allowStatus(null);
  await page.setInputFiles('#file', join(t.ROOT, hf));
  await page.waitForFunction(() => window.memopt.state.model.label === 'hf.json');
  await t.idle(page);
  const want = cli(t, ['estimate', '--json', '--model', hf, yaml]);
  const got = await pagePeak(page);
  check(got.bytes === want.peak_bytes, `priced as the CLI prices the two files: ${got.bytes} vs ${want.peak_bytes}`);
  const run = await page.evaluate(() => window.memopt.state.estimate.data.run);
  check(run && run.model && run.model.parallel.pipeline_parallel === 2 && want.stages.length === 2,
    `the API priced 2 pipeline stages, the CLI has ${want.stages.length}: ${JSON.stringify(run && run.model && run.model.parallel)}`);
  const given = await page.evaluate(() => window.memopt.state.model.obj.parallel);
  check(given.pipeline_parallel !== 2, `the model given says another layout (PP ${given.pipeline_parallel}): the file's replaces it`);
  const lines = { pipeline_parallel: ['parallel_config.pipeline_stage', 18], tensor_parallel: ['parallel_config.model_parallel', 17], micro_batch_num: ['parallel_config.micro_batch_num', 19] };
  for (const [key, [k, line]] of Object.entries(lines)) {
    const f = await fieldState(page, key);
    const sec = key === 'micro_batch_num' ? 'training' : 'parallel';
    check(Number(f.value) === run.model[sec][key], `${key} shows the priced ${run.model[sec][key]}: ${f.value}`);
    check(f.source === 'file' && f.readOnly, `${key} is marked as the file's and cannot be edited: ${JSON.stringify(f)}`);
    check(f.described.includes('config.yaml') && f.described.includes(k) && f.described.includes(`line ${line}`),
      `${key} says where it comes from (config.yaml, ${k}, line ${line}): ${f.described}`);
  }
  const ws = await fieldState(page, 'world_size');
  check(Number(ws.value) === run.model.parallel.world_size && Number(ws.value) === 8, `Devices shows the priced ${run.model.parallel.world_size}: ${ws.value}`);
  check(ws.source === 'file' || ws.source === 'run' || ws.source === 'model', `Devices has a source: ${ws.source}`);
  const seq = await fieldState(page, 'seq_length');
  check(seq.source === 'model' && !seq.readOnly && Number(seq.value) === run.model.model.seq_length, `the sequence length is the model's own and editable: ${JSON.stringify(seq)}`);
  const note = await page.textContent('#run-note');
  check(/Priced with the run of config\.yaml read over the model hf\.json/.test(note), `the note names the file and the model: ${note.slice(0, 200)}`);
  check(/DP 2/.test(await page.textContent('#parallel .derived')), `the derived line is the priced DP 2: ${await page.textContent('#parallel .derived')}`);
  await page.click('#run-note button.link >> text=Show line 18');
  const sel = await page.evaluate(() => { const ta = document.getElementById('yaml-text'); return ta.value.slice(ta.selectionStart, ta.selectionEnd); });
  check(/pipeline_stage: 2/.test(sel), `Show line 18 selects the file's line: ${JSON.stringify(sel)}`);
  await t.axe(page, 'run over the model given');
  await t.shot(page, 'files-run-over-model');

  t.setStep('files: the same file over a preset');
  await page.selectOption('#preset', 'llama2-7b');
  await page.waitForFunction(() => window.memopt.state.model.label === 'llama2-7b');
  await t.idle(page);
  const wantP = cli(t, ['estimate', '--json', '--model', 'llama2-7b', yaml]);
  const gotP = await pagePeak(page);
  check(gotP.bytes === wantP.peak_bytes, `over the preset, priced as the CLI: ${gotP.bytes} vs ${wantP.peak_bytes}`);
  const pp = await fieldState(page, 'pipeline_parallel');
  check(Number(pp.value) === 2 && pp.source === 'file' && wantP.stages.length === 2, `PP shows the file's 2 over the preset: ${JSON.stringify(pp)}`);

  // configs/general/llm_pretrain_dense_template.yaml (mindformers f52743ca,
  // tests/data/mindformers/SOURCES.tsv): parallel_config model_parallel 2
  // (line 89), pipeline_stage 2 (line 90), use_seq_parallel True (line 92),
  // micro_batch_num 2 (line 93); its model is pretrained_model_dir's config.json
  t.setStep('files: the configs/general dense template over a config.json');
  const TEMPLATE = 'tests/data/mindformers/master/llm_pretrain_dense_template.yaml';
  await fresh(page, base, t);
  t.allowStatus(422);
  await upload(page, t, TEMPLATE);
  t.allowStatus(null);
  await page.setInputFiles('#file', join(t.ROOT, HF));
  await page.waitForFunction(() => window.memopt.state.model.label === 'hf-config.json');
  await t.idle(page);
  const wantT = cli(t, ['estimate', '--json', '--model', HF, TEMPLATE]);
  const gotT = await pagePeak(page);
  check(gotT.bytes === wantT.peak_bytes && wantT.stages.length === 2, `the template over hf-config.json priced as the CLI: ${gotT.bytes} vs ${wantT.peak_bytes}, ${wantT.stages.length} stages`);
  for (const [key, want, line] of [['pipeline_parallel', '2', 90], ['tensor_parallel', '2', 89], ['micro_batch_num', '2', 93]]) {
    const f = await fieldState(page, key);
    check(f.value === want && f.source === 'file' && f.readOnly && f.described.includes(`line ${line}`),
      `${key} shows the template's ${want} (line ${line}), marked and not editable: ${JSON.stringify(f)}`);
  }
  // the priced run has sequence parallel on (use_seq_parallel True, line
  // 92): the answer names its key and line as it does the degrees', and the
  // page marks it as the file's, with the line
  const sp = await fieldState(page, 'sp');
  const spPriced = await page.evaluate(() => window.memopt.state.estimate.data.run.model.parallel.sequence_parallel);
  check(spPriced === true && sp.value === true && sp.source === 'file' && sp.readOnly
    && /parallel_config\.use_seq_parallel, line 92/.test(sp.described),
  `SP shows the priced on, marked as the file's use_seq_parallel at line 92: ${JSON.stringify(sp)}`);

  t.setStep('files: a model of its own: nothing is marked');
  await fresh(page, base, t);
  check(await page.locator('#run-note').count() === 0, 'no note when the model is all the model\'s own');
  check((await fieldState(page, 'pipeline_parallel')).source === 'model', 'PP is the model\'s');
}

// t: {check, log, idle, axe, shot, setStep, allowStatus, ROOT, MEMOPT}
export async function fileScenarios(page, base, t) {
  const scenarios = [() => llamaGraph(page, base, t), () => deepseekWidths(page, base, t), () => modelErrors(page, base, t), () => modelNeeded(page, base, t),
    () => serverExport(page, base, t), () => deviceList(page, base, t), () => emptyFile(page, base, t), () => noEffect(page, base, t), () => sliderWire(page, base, t),
    () => vppLabels(page, base, t), () => serverGone(page, base, t), () => honestHeadline(page, base, t),
    () => phone(page, base, t), () => mapMemory(page, base, t), () => pricedRun(page, base, t)];
  // each scenario starts afresh: one that throws does not hide the others
  for (const s of scenarios) {
    try {
      await s();
    } catch (err) {
      t.check(false, `threw: ${String(err.message || err).split('\n')[0]}`);
    }
  }
}
