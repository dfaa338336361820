// Browser tests of the memopt web UI: the real server ($MEMOPT serve
// --web-root web), Debian's chromium through playwright-core, axe-core on
// every state. Screenshots go to test-output/screenshots/.
import { chromium } from 'playwright-core';
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, mkdirSync, readFileSync, writeFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createRequire } from 'node:module';
import { editing } from './editing.mjs';
import { ledgerScenarios } from './ledger.mjs';
import { migrateScenarios } from './migrate.mjs';
import { conflictScenarios } from './conflicts.mjs';
import { fileScenarios } from './files.mjs';
import { coreTruth } from './core_truth.mjs';
import { sizeScenarios } from './size.mjs';
import { steplogScenarios } from './steplog.mjs';
import { sameRunScenarios } from './same_run.mjs';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const MEMOPT = process.env.MEMOPT || join(ROOT, 'build/memopt');
const CHROMIUM = process.env.CHROMIUM || '/usr/bin/chromium';
const OUT = join(ROOT, 'test-output');
const SHOTS = join(OUT, 'screenshots');
const AXE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');
const T0 = Date.now();

const failures = [];
let step = '';
function check(cond, msg) {
  if (!cond) {
    failures.push(`${step}: ${msg}`);
    console.log(`FAIL: ${step}: ${msg}`);
  }
  return cond;
}
function log(msg) {
  console.log(`[${((Date.now() - T0) / 1000).toFixed(1)}s] ${msg}`);
}

// ---- the server ----------------------------------------------------------------

function startServer() {
  return new Promise((resolveP, reject) => {
    const proc = spawn(MEMOPT, ['serve', '--port', '0', '--web-root', process.env.WEB_ROOT || 'web'], { cwd: ROOT, stdio: ['ignore', 'ignore', 'pipe'] });
    let err = '';
    const timer = setTimeout(() => reject(new Error(`no "listening on" line from ${MEMOPT} serve:\n${err}`)), 15000);
    proc.stderr.on('data', (d) => {
      err += d.toString();
      const m = /listening on http:\/\/([^\s:]+):(\d+)/.exec(err);
      if (m && !proc.port) {
        proc.port = Number(m[2]);
        proc.host = m[1];
        clearTimeout(timer);
        resolveP(proc);
      }
      if (err.length > 1e6) err = err.slice(-1e5);
    });
    proc.on('exit', (code) => reject(new Error(`server exited ${code}:\n${err}`)));
  });
}

// ---- helpers ---------------------------------------------------------------------

async function idle(page) {
  await page.waitForFunction(() => window.memopt && window.memopt.ready && !window.memopt.busy, null, { timeout: 20000 });
}

async function axe(page, name) {
  await page.evaluate(AXE);
  const res = await page.evaluate(() => window.axe.run(document, {
    runOnly: { type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'wcag22aa', 'best-practice'] },
  }));
  for (const v of res.violations) {
    check(false, `axe (${name}): ${v.id}: ${v.help} — ${v.nodes.slice(0, 3).map((n) => n.target.join(' ')).join(' | ')}`);
  }
  log(`axe ${name}: ${res.violations.length} violations, ${res.passes.length} rules pass`);
}

async function shot(page, name) {
  await page.screenshot({ path: join(SHOTS, `${name}.png`), fullPage: true });
}

async function rowsWith(page, cls) {
  return page.$$eval(`#layer-map tbody tr.${cls}`, (trs) => trs.map((tr) => Number(tr.dataset.layer)));
}

async function cellText(page, layer, col) {
  return page.$eval(`#layer-map tbody tr[data-layer="${layer}"] td[data-col="${col}"]`, (td) => td.textContent);
}

async function setNumber(page, key, value) {
  const input = page.locator(`[data-key="${key}"]`);
  await input.focus();
  await input.fill(String(value));
  await page.keyboard.press('Enter');
  await input.dispatchEvent('change');
}

// Clicks Download; a config that runs out of memory asks to confirm first.
async function download(page) {
  const [dl] = await Promise.all([page.waitForEvent('download'), (async () => {
    await page.click('#export');
    if (await page.isVisible('#export-confirm')) await page.click('#export-anyway');
  })()]);
  return dl;
}

function median(xs) {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)];
}

// ---- the scenario ------------------------------------------------------------------

async function run(page, base) {
  step = 'load';
  await page.goto(base);
  await idle(page);
  check(await page.locator('#layer-map tbody tr').count() === 32, 'the default model has 32 rows');
  await axe(page, 'initial');
  await shot(page, '01-initial');

  step = 'pick a preset';
  await page.selectOption('#preset', 'mixtral-8x7b');
  await page.waitForFunction(() => window.memopt.state.model.label === 'mixtral-8x7b');
  await idle(page);
  check((await page.textContent('#model-label')).includes('mixtral-8x7b'), 'the header names the preset');
  // the cell's first text is the type (its memory follows for screen readers)
  check((await page.$eval('#layer-map tbody tr[data-layer="0"] td.type', (td) => td.firstChild.textContent)) === 'moe', 'layer types come from the layout');
  const estimator = await page.evaluate(() => !document.querySelector('#memory .unavailable'));
  log(`estimator ${estimator ? 'available' : 'answers 501'}`);

  step = 'slider by keyboard';
  await page.locator('[data-key="mode/full"]').focus();
  await page.keyboard.press('Space');
  await idle(page);
  await page.locator('[data-key="full/add"]').focus();
  await page.keyboard.press('Enter');
  await idle(page);
  const memBefore = await page.textContent('#memory');
  const hi = page.locator('[data-key="full/0/hi"]');
  await hi.focus();
  check(await page.evaluate(() => document.activeElement.getAttribute('role')) === 'slider', 'the thumb is a focusable slider');
  await page.keyboard.press('PageUp');
  await page.keyboard.press('ArrowRight');
  await page.keyboard.press('ArrowLeft');
  await page.keyboard.press('ArrowRight');
  await idle(page);
  check(await hi.getAttribute('aria-valuenow') === '11', `PageUp + arrows moved the thumb to 11 (${await hi.getAttribute('aria-valuenow')})`);
  check(await page.locator('[data-key="full/0/lo"]').getAttribute('aria-valuemax') === '11', 'the lower thumb cannot pass the upper one');
  check((await page.inputValue('#yaml-text')).includes('full_recompute_layer: [0-11]'), 'the YAML follows the slider');
  check((await cellText(page, 11, 'full')).includes('recompute'), 'layer 11 is recomputed on the map');
  check(!(await cellText(page, 12, 'full')).includes('recompute'), 'layer 12 is not');
  if (estimator) check((await page.textContent('#memory')) !== memBefore, 'the memory panel changed with the slider');
  else check(await page.locator('#memory .unavailable').count() === 1, 'the memory panel says the estimator is not available');
  await page.keyboard.press('Home');
  await page.keyboard.press('End');
  await idle(page);
  check(await hi.getAttribute('aria-valuenow') === '31', 'End moves the upper thumb to the last layer');
  await page.keyboard.press('Home');
  await page.keyboard.press('PageUp');
  await page.keyboard.press('ArrowRight');
  await idle(page);
  check(await hi.getAttribute('aria-valuenow') === '11', 'Home then PageUp + 1 = 11');
  await shot(page, '02-slider');

  step = 'recompute/swap overlap';
  await page.locator('[data-key="swap/enable"]').focus();
  await page.keyboard.press('Space');
  await idle(page);
  await page.locator('[data-key="ls/add"]').focus();
  await page.keyboard.press('Enter');
  await idle(page);
  await setNumber(page, 'ls/0/r/0/to', 12);
  await setNumber(page, 'ls/0/r/0/from', 8);
  await idle(page);
  const bad = await rowsWith(page, 'row-error');
  check(JSON.stringify(bad) === '[8,9,10,11]', `rows flagged: ${JSON.stringify(bad)}, expected 8-11`);
  for (const l of [8, 11]) {
    check((await page.getAttribute(`#layer-map tr[data-layer="${l}"] td[data-col="full"]`, 'class')).includes('flag-error'), `layer ${l}: the full-recompute cell is flagged`);
    check((await page.getAttribute(`#layer-map tr[data-layer="${l}"] td[data-col="layerSwap"]`, 'class')).includes('flag-error'), `layer ${l}: the layer-swap cell is flagged`);
  }
  const title = await page.getAttribute('#layer-map tr[data-layer="9"] td[data-col="layerSwap"]', 'title');
  check(/both recomputed/.test(title || '') && /YAML line \d+/.test(title || ''), `the cell explains the conflict with its YAML line: ${title}`);
  check(await page.locator('.range-row[data-target="full"].flag-error').count() === 1, 'the full_recompute_layer range is flagged');
  check(await page.locator('.range-row[data-target="layerSwap:0"].flag-error').count() === 1, 'the layer_swap range is flagged');
  check(await page.isDisabled('#export'), 'export is disabled');
  check(/blocked/.test(await page.textContent('#export-reason')), 'the export button says why');
  check((await page.textContent('#diags')).includes('recompute-swap-layer'), 'the finding is listed');
  await axe(page, 'conflict');
  await shot(page, '03-conflict');

  step = 'fix it';
  await setNumber(page, 'ls/0/r/0/to', 14);
  await setNumber(page, 'ls/0/r/0/from', 12);
  await idle(page);
  check((await rowsWith(page, 'row-error')).length === 0, 'no row is flagged');
  check(!(await page.isDisabled('#export')), 'export is enabled');
  check((await cellText(page, 13, 'layerSwap')).includes('swap'), 'layer 13 is swapped');

  step = 'export';
  const dl0 = await download(page);
  const file = join(OUT, 'memopt.yaml');
  await dl0.saveAs(file);
  check(dl0.suggestedFilename() === 'memopt.yaml', `download name ${dl0.suggestedFilename()}`);
  const v = spawnSync(MEMOPT, ['validate', '--model', 'mixtral-8x7b', file], { encoding: 'utf8' });
  check(v.status === 0, `memopt validate accepts the export (exit ${v.status}): ${v.stdout}${v.stderr}`);
  const exported = readFileSync(file, 'utf8');
  check(/full_recompute_layer: \[0-11\]/.test(exported) && /layers: \[12-14\]/.test(exported), `the export holds the plan:\n${exported}`);
  await axe(page, 'valid');
  await shot(page, '04-valid');

  step = 'pattern preview';
  await page.locator('[data-key="exc/add"]').focus();
  await page.keyboard.press('Enter');
  await idle(page);
  const pat = page.locator('[data-key="exc/0/pattern"]');
  await pat.fill('mlp.activation_func');
  await idle(page);
  const pv = await page.textContent('.preview[data-pkey="exclude_op"]');
  check(/nothing/i.test(pv) && /did you mean/.test(pv), `no match shows "did you mean": ${pv}`);
  await pat.fill('.*activation_func');
  await idle(page);
  check((await page.textContent('.preview[data-pkey="exclude_op"]')).includes('mlp.experts.activation_func'), 'the preview lists the matched paths');
  await axe(page, 'patterns');

  step = 'YAML panel edits the controls';
  const yaml = await page.inputValue('#yaml-text');
  await page.fill('#yaml-text', yaml.replace('[0-11]', '[0-5]'));
  await idle(page);
  check(await page.locator('[data-key="full/0/hi"]').getAttribute('aria-valuenow') === '5', 'editing the YAML moved the slider');
  await page.fill('#yaml-text', 'recompute:\n  mode: [\n');
  await idle(page);
  check(/line \d+:\d+/.test(await page.textContent('#yaml-errors')), 'a YAML syntax error is shown inline with its line');
  await page.fill('#yaml-text', yaml);
  await idle(page);

  step = 'share link';
  const before = await page.evaluate(() => JSON.stringify(window.memopt.share()));
  const mapBefore = await page.textContent('#layer-map');
  await page.waitForFunction(() => location.hash.startsWith('#s='));
  await page.waitForTimeout(300);
  const url = page.url();
  await page.goto('about:blank');
  await page.goto(url);
  await idle(page);
  check(await page.evaluate(() => JSON.stringify(window.memopt.share())) === before, 'the state after reload is identical');
  check(await page.inputValue('#yaml-text') === yaml, 'the YAML after reload is identical');
  check(await page.textContent('#layer-map') === mapBefore, 'the layer map after reload is identical');
  check(await page.locator('[data-key="full/0/hi"]').getAttribute('aria-valuenow') === '11', 'the slider after reload is where it was');
  await axe(page, 'reloaded');

  step = 'upload a HF config.json';
  await page.setInputFiles('#file', join(ROOT, 'tests/api/fixtures/hf-config.json'));
  await page.waitForFunction(() => window.memopt.state.model.label === 'hf-config.json');
  await idle(page);
  check(/Loaded/.test(await page.textContent('#upload-status')), 'the upload is confirmed');
  check(await page.locator('#layer-map tbody tr').count() === 32, 'the imported model has 32 layers');
  await axe(page, 'hf-upload');
  await shot(page, '05-hf-config');

  step = 'upload errors inline';
  await page.setInputFiles('#file', { name: 'broken.yaml', mimeType: 'application/yaml', buffer: Buffer.from('model:\n  num_layers: [4\n  hidden_size: 8\n') });
  await page.waitForFunction(() => /error/.test(document.querySelector('#upload-status').textContent));
  check(/line \d+, column \d+/.test(await page.textContent('#upload-status')), 'a parse error names its line and column');
  await axe(page, 'upload-error');
  await shot(page, '06-upload-error');

  step = 'training YAML';
  const training = readFileSync(join(ROOT, 'tests/api/fixtures/training.yaml'), 'utf8');
  await page.setInputFiles('#file', { name: 'train.yaml', mimeType: 'application/yaml', buffer: Buffer.from(training) });
  await page.waitForFunction(() => window.memopt.state.training && window.memopt.state.training.name === 'train.yaml');
  await idle(page);
  if (!(await page.isDisabled('#export'))) {
    const dl = await download(page);
    const tfile = join(OUT, 'train.yaml');
    await dl.saveAs(tfile);
    const text = readFileSync(tfile, 'utf8');
    const keep = training.split('\n').filter((l) => /^[a-z_]+:/.test(l) && !/^(recompute|recompute_comm|swap):/.test(l));
    check(keep.every((l) => text.includes(l)), 'the exported training YAML keeps its other keys');
    const tv = spawnSync(MEMOPT, ['validate', tfile], { encoding: 'utf8' });
    check(tv.status === 0, `memopt validate accepts the exported training YAML (exit ${tv.status}): ${tv.stdout}${tv.stderr}`);
  } else check(false, `export of the training YAML is blocked: ${await page.textContent('#export-reason')}`);

  step = '128-layer round trip';
  const m = await (await fetch(`${base}api/v1/presets/llama2-7b`)).json();
  m.model.num_layers = 128;
  await page.setInputFiles('#file', { name: 'big.json', mimeType: 'application/json', buffer: Buffer.from(JSON.stringify(m)) });
  await page.waitForFunction(() => window.memopt.state.model.label === 'big.json');
  await idle(page);
  await page.fill('#yaml-text', 'recompute:\n  mode: full\n  full_recompute_layer: [0-10]\nswap:\n  enable: True\n  layer_swap:\n    - layers: [100-110]\n');
  await idle(page);
  const thumb = page.locator('[data-key="full/0/hi"]');
  await thumb.focus();
  const samples = [];
  for (let i = 0; i < 12; i += 1) {
    await page.keyboard.press(i % 2 ? 'ArrowLeft' : 'PageUp');
    await idle(page);
    samples.push(await page.evaluate(() => window.memopt.perf.last));
  }
  const ms = median(samples.map((s) => s.ms));
  const painted = median(samples.map((s) => s.painted));
  log(`128-layer slider round trip: median ${ms.toFixed(1)} ms keypress -> answers rendered, ${painted.toFixed(1)} ms to the next painted frame (expand ${median(samples.map((s) => s.expand)).toFixed(1)} ms, estimate ${median(samples.map((s) => s.estimate)).toFixed(1)} ms; ${samples.length} samples)`);
  writeFileSync(join(OUT, 'slider-roundtrip.json'), JSON.stringify({ median_ms: ms, median_painted_ms: painted, samples }, null, 1));
  // The 100 ms target is a benchmark (bench/browser.sh prints it from slider-roundtrip.json),
  // not a test: these machines are shared and this suite also runs under ASan.
  check(samples.length === 12 && samples.every((s) => s && s.ms > 0 && Number.isFinite(s.ms)),
        'every keypress of the 128-layer slider rendered an answer');
  await shot(page, '07-128-layers');

  step = 'dark mode';
  await page.emulateMedia({ colorScheme: 'dark' });
  await page.waitForTimeout(100);
  await axe(page, 'dark');
  await shot(page, '08-dark');
  await page.emulateMedia({ colorScheme: 'light' });

  step = '1024 px';
  await page.setViewportSize({ width: 1024, height: 800 });
  await page.waitForTimeout(100);
  const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
  check(overflow <= 0, `the page is ${overflow} px wider than 1024`);
  await shot(page, '09-1024');

  step = 'keyboard';
  await page.goto('about:blank');
  await page.goto(url);
  await idle(page);
  await page.keyboard.press('Tab');
  check(await page.evaluate(() => document.activeElement.className) === 'skip', 'the first Tab stop is the skip link');
  await page.keyboard.press('Enter');
  check(await page.evaluate(() => document.activeElement.id) === 'map-heading', 'the skip link moves focus to the layer map');

  step = 'fit to budget';
  await page.selectOption('#preset', 'mixtral-8x7b');
  await page.waitForFunction(() => window.memopt.state.model.label === 'mixtral-8x7b');
  await idle(page);
  await page.fill('#yaml-text', 'recompute:\n  mode: None\n');
  await idle(page);
  check(/over by/.test(await page.textContent('#memory')), 'without a plan mixtral-8x7b is over the device');
  await page.click('#fit');
  await page.waitForFunction(() => /Proposal|No plan|refused|error/.test(document.querySelector('#fit-status').textContent));
  await idle(page);
  const fit = await page.textContent('#fit-status');
  check(/^Proposal fits the budget/.test(fit), `the planner fits the device: ${fit}`);
  await page.click('#fit-accept');
  await idle(page);
  const planned = await page.inputValue('#yaml-text');
  const vp = spawnSync(MEMOPT, ['validate', '--model', 'mixtral-8x7b', '-'], { input: planned, encoding: 'utf8' });
  check(vp.status === 0, `memopt validate accepts the planned config (exit ${vp.status}): ${vp.stderr}`);
  check(!/over by/.test(await page.textContent('#memory')), 'after fitting the memory bar is within the device');
  await axe(page, 'fitted');
  await shot(page, '10-fit-to-budget');
}

let allowed = null; // an HTTP status a scenario provokes on purpose (its console line is expected)

async function main() {
  mkdirSync(SHOTS, { recursive: true });
  const server = await startServer();
  const base = `http://127.0.0.1:${server.port}/`;
  const profile = mkdtempSync(join(tmpdir(), 'memopt-chromium-'));
  let context;
  try {
    context = await chromium.launchPersistentContext(profile, {
      executablePath: CHROMIUM,
      headless: true,
      args: ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking',
        '--disable-component-update', '--disable-sync'],
      acceptDownloads: true,
      viewport: { width: 1280, height: 900 },
    });
    const page = context.pages()[0] || await context.newPage();
    page.on('pageerror', (e) => check(false, `page error: ${e.message}`));
    page.on('console', (msg) => {
      const t = msg.text();
      if (/Content Security Policy|Refused to/.test(t)) check(false, `CSP violation: ${t}`);
      else if (msg.type() === 'error' && !/status of 501/.test(t)
        && !(allowed && (t.includes(`status of ${allowed}`) || t.includes(String(allowed))))) check(false, `console error: ${t}`);
    });
    // BROWSER_ONLY=editing runs only the editing scenarios (to check them against another UI),
    // BROWSER_ONLY=ledger only the trace panel's, BROWSER_ONLY=migrate
    // only the graph-mode migrate offer's, BROWSER_ONLY=conflicts every
    // rule code on its control
    const only = process.env.BROWSER_ONLY;
    if (!only || only === 'run') await run(page, base); // BROWSER_ONLY=run: the first scenario alone
    if (!only || only === 'editing') await editing(page, base, {
      check, log, idle, axe, shot, setNumber, cellText, ROOT, OUT, MEMOPT, setStep: (s) => { step = s; },
    });
    if (!only || only === 'conflicts') await conflictScenarios(page, base, {
      check, log, idle, axe, shot, setNumber, ROOT, setStep: (s) => { step = s; },
    });
    if (!only || only === 'ledger') await ledgerScenarios(page, base, {
      check, log, idle, axe, shot, ROOT, setStep: (s) => { step = s; }, allowStatus: (st) => { allowed = st; },
    });
    if (!only || only === 'migrate') await migrateScenarios(page, base, {
      check, log, idle, axe, shot, ROOT, setStep: (s) => { step = s; },
    });
    // BROWSER_ONLY=files: files read as the CLI reads them (WEB_ROOT=DIR serves another UI)
    if (!only || only === 'files') await fileScenarios(page, base, {
      check, log, idle, axe, shot, ROOT, OUT, MEMOPT, setStep: (s) => { step = s; }, allowStatus: (st) => { allowed = st; },
    });
    // BROWSER_ONLY=steplog: the measured step time panel (a training log against the model)
    if (!only || only === 'steplog') await steplogScenarios(page, base, {
      check, log, idle, axe, shot, ROOT, setStep: (s) => { step = s; }, allowStatus: (st) => { allowed = st; },
    });
    // BROWSER_ONLY=same_run: every request describes the run on show (edited fields included)
    if (!only || only === 'same_run') await sameRunScenarios(page, base, {
      check, log, idle, axe, shot, setNumber, ROOT, setStep: (s) => { step = s; }, allowStatus: (st) => { allowed = st; },
    });
    // BROWSER_ONLY=size: the Size the job panel's table and chart
    if (!only || only === 'size') await sizeScenarios(page, base, {
      check, log, idle, axe, shot, setStep: (s) => { step = s; },
    });
    // BROWSER_ONLY=core_truth: the page tells what the core tells (step time, plain errors, lanes, read-outs, planner)
    if (!only || only === 'core_truth') await coreTruth(page, base, {
      check, log, idle, axe, shot, setNumber, ROOT, OUT, MEMOPT, setStep: (s) => { step = s; }, allowStatus: (st) => { allowed = st; },
    });
  } catch (err) {
    failures.push(`${step}: ${err.stack || err}`);
    console.log(`FAIL: ${step}: ${err.stack || err}`);
  } finally {
    if (context) await context.close();
    server.kill('SIGTERM');
    rmSync(profile, { recursive: true, force: true });
  }
  log(`screenshots in ${SHOTS}`);
  if (failures.length) {
    console.log(`browser: ${failures.length} failure(s)`);
    process.exit(1);
  }
  console.log(`browser: every check passed in ${((Date.now() - T0) / 1000).toFixed(1)} s`);
}

main();
