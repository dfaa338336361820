// Browser tests that every request the page sends describes the run on
// show, the one the estimate prices: after a parallel field is edited, the
// trace comparison (POST /api/v1/ledger) and the measured step time (POST
// /api/v1/calibrate) carry the edited model, not the preset by its name,
// and their answers are of the estimate's layout.
//
// llama2-7b as the server lists it (GET /api/v1/presets/llama2-7b) has
// pipeline_parallel 1 on 8 devices; PP 2 makes two pipeline stages
// (DP 8 / 2 = 4), so a comparison of stage 1 exists only for the edited
// model. The trace is tests/data/ledger/pp2-stage0-optimizer.csv, the log
// tests/data/steplog/cli-mindformers.log (tests/browser/ledger.mjs and
// steplog.mjs give their hand-worked figures); the figures compared here
// are the estimate's own, read from the page's estimate answer.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

const LEDGER = 'tests/data/ledger/pp2-stage0-optimizer.csv';
const MF_LOG = 'tests/data/steplog/cli-mindformers.log';

async function fresh(page, base, t) {
  await page.goto('about:blank');
  await page.goto(base);
  await t.idle(page);
}

async function settled(page, id) {
  await page.waitForFunction((sel) => ['done', 'error'].includes(document.querySelector(sel).dataset.state), `#${id}`, { timeout: 20000 });
}

// The model a request carried (the ledger's and the calibration's are a
// model file's text; null when none).
function sentModel(m) {
  if (m === null || m === undefined) return null;
  if (typeof m !== 'string') return m;
  try {
    return JSON.parse(m);
  } catch {
    return { name: m }; // a preset's name
  }
}

// The estimate on show: its stages' peaks and its step time.
function shownEstimate(page) {
  return page.evaluate(() => {
    const d = window.memopt.state.estimate.data;
    return { stages: d.stages.map((s) => ({ stage: s.stage, peak: s.peak_bytes })), step: d.time.step_seconds };
  });
}

// PP 2 in the parallel fields of llama2-7b: the estimate has two stages.
async function editPipeline(page, base, t) {
  await fresh(page, base, t);
  const before = await page.evaluate(() => window.memopt.state.model);
  t.check(before.preset === 'llama2-7b' && before.obj.parallel.pipeline_parallel === 1, `the default is the preset llama2-7b with PP 1: ${before.preset}, PP ${before.obj.parallel.pipeline_parallel}`);
  await t.setNumber(page, 'par/pipeline_parallel', 2);
  await t.idle(page);
  const est = await shownEstimate(page);
  t.check(est.stages.length === 2, `PP 2: the estimate prices two stages (${est.stages.length})`);
  return est;
}

async function ledgerOfEdited(page, base, t) {
  t.setStep('same run: the trace comparison after PP is edited');
  const est = await editPipeline(page, base, t);
  await page.fill('#ledger-stage', '1');
  await page.locator('#ledger-stage').blur();
  const requests = [];
  const listen = (r) => { if (r.url().endsWith('/api/v1/ledger')) requests.push(r); };
  page.on('request', listen);
  await page.setInputFiles('#trace-file', join(t.ROOT, LEDGER));
  await settled(page, 'ledger');
  page.off('request', listen);
  const last = requests[requests.length - 1];
  const sent = last ? JSON.parse(last.postData() || '{}') : {};
  const m = sentModel(sent.model);
  t.check(m && m.parallel && m.parallel.pipeline_parallel === 2 && m.parallel.data_parallel === 4,
    `the ledger request carries the edited PP 2 (DP 4), not the preset's name: ${String(sent.model).slice(0, 80)}`);
  const data = await page.evaluate(() => window.memopt.state.ledger.data);
  t.check(await page.getAttribute('#ledger', 'data-state') === 'done' && data && data.compare,
    `stage 1 is compared (the preset by its name has one stage): ${(await page.textContent('#ledger')).slice(0, 200)}`);
  if (data && data.compare) {
    const s1 = est.stages.find((s) => s.stage === 1);
    t.check(data.compare.stage === 1 && data.compare.estimate_peak_bytes === s1.peak,
      `the comparison's estimated peak is the estimate's stage 1 peak: ${data.compare.estimate_peak_bytes} vs ${s1.peak}`);
    const shown = await page.textContent('#ledger .ledger-peaks');
    t.check(/estimated peak, stage 1/.test(shown), `the page says stage 1: ${shown.slice(0, 200)}`);
  }
  t.check(await page.locator('#ledger-again').count() === 0, 'the comparison is of the run on show (not stale)');
  // without a stage the ledger compares the stage with the estimate's peak
  await page.fill('#ledger-stage', '');
  await page.locator('#ledger-stage').dispatchEvent('change');
  await page.waitForFunction(() => { const l = window.memopt.state.ledger; return l.state === 'done' && l.data.compare && l.data.compare.stage !== 1; }, null, { timeout: 20000 });
  const peak = await page.evaluate(() => [window.memopt.state.ledger.data.compare.estimate_peak_bytes, window.memopt.state.estimate.data.peak_bytes]);
  t.check(peak[0] === peak[1], `no stage named: the compared peak is the estimate's peak (${peak[0]} vs ${peak[1]})`);
  await t.shot(page, 'same-run-ledger');
}

async function calibrateOfEdited(page, base, t) {
  t.setStep('same run: the measured step time after PP is edited');
  const est = await editPipeline(page, base, t);
  const text = readFileSync(join(t.ROOT, MF_LOG), 'utf8');
  await page.fill('#steplog-text', text);
  const [request] = await Promise.all([
    page.waitForRequest((r) => r.url().endsWith('/api/v1/calibrate')),
    page.click('#steplog-send'),
  ]);
  await settled(page, 'steplog');
  const sent = JSON.parse(request.postData() || '{}');
  const m = sentModel(sent.runs && sent.runs[0] && sent.runs[0].model);
  t.check(m && m.parallel && m.parallel.pipeline_parallel === 2,
    `the calibrate request carries the edited PP 2, not the preset's name: ${String(sent.runs && sent.runs[0].model).slice(0, 80)}`);
  const modelled = await page.evaluate(() => {
    const d = document.querySelector('#steplog dd.modelled-step');
    return d ? Number(d.dataset.value) : null;
  });
  t.check(modelled !== null && Math.abs(modelled - est.step) <= 1e-9 * est.step,
    `the modelled step is the memory panel's step time of the edited run: ${modelled} vs ${est.step}`);
  // the same log against the preset by its name: another figure, so the
  // check above tells the two apart
  const byName = await (await fetch(new URL('/api/v1/calibrate', base).href, {
    method: 'POST', headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ runs: [{ model: 'llama2-7b', config: sent.runs[0].config, log: text }] }),
  })).json();
  t.check(byName.runs && Math.abs(byName.runs[0].estimated_before - est.step) > 1e-6 * est.step,
    `the preset by its name models another step (${byName.runs && byName.runs[0].estimated_before} s), the page's is the edited run's`);
  t.check(await page.locator('#steplog-again').count() === 0, 'the comparison is of the run on show (not stale)');
  await t.setNumber(page, 'par/pipeline_parallel', 1);
  await t.idle(page);
  t.check(await page.locator('#steplog-again').count() === 1, 'PP edited back: the comparison is marked as of an earlier model');
}

// A whole training YAML pasted into the YAML panel over the preset: its
// model.model_config and parallel_config (TP 2, PP 2, DP 2: 8 devices) are
// read over llama2-7b as MindSpore Transformers reads its YAML over the
// model (docs/rules.md, model-replaced), so the estimate prices two stages.
const RUN_YAML = `# a run of its own over the model shown
use_legacy: False
model:
  model_config:
    params_dtype: float32
context:
  mode: 1
parallel_config:
  data_parallel: 2
  model_parallel: 2
  pipeline_stage: 2
  micro_batch_num: 4
recompute:
  mode: full
  full_recompute_layer: [0-3]
`;

async function paste(page, t, text) {
  await page.locator('#yaml-text').focus();
  await page.keyboard.press('Control+A');
  await page.keyboard.insertText(text);
  await t.idle(page);
}

async function fitOnFile(page, base, t) {
  t.setStep('same run: Fit to budget on a pasted training YAML');
  await fresh(page, base, t);
  await paste(page, t, RUN_YAML);
  const est = await shownEstimate(page);
  t.check(est.stages.length === 2, `the file's PP 2 is priced: ${est.stages.length} stages`);
  await page.check('[data-key="fit/start/fresh"]');
  const estimates = [];
  const listen = (r) => { if (r.url().endsWith('/api/v1/estimate')) estimates.push(JSON.parse(r.postData() || '{}').config || ''); };
  const [request, response] = await Promise.all([
    page.waitForRequest((r) => r.url().endsWith('/api/v1/plan')),
    page.waitForResponse((r) => r.url().endsWith('/api/v1/plan')),
    (async () => {
      page.on('request', listen);
      await page.click('#fit');
      await page.waitForFunction(() => !/Planning/.test(document.querySelector('#fit-status').textContent) && document.querySelector('#fit-status').textContent);
      await t.idle(page);
      await page.waitForFunction(() => { const p = window.memopt.state.fit.proposal; return p && p.why; }, null, { timeout: 20000 });
      page.off('request', listen);
    })(),
  ]);
  const sent = JSON.parse(request.postData() || '{}');
  t.check(/pipeline_stage: 2/.test(sent.config) && /model_parallel: 2/.test(sent.config),
    `a fresh start plans on the file's run (its parallel_config kept): ${JSON.stringify(sent.config)}`);
  t.check(!/full_recompute_layer: \[0-3\]/.test(sent.config), `a fresh start has no plan of its own: ${JSON.stringify(sent.config)}`);
  const plan = await response.json();
  t.check(plan.estimate && plan.estimate.stages && plan.estimate.stages.length === est.stages.length,
    `the proposal is priced on the estimate's ${est.stages.length} stages: ${plan.estimate && plan.estimate.stages && plan.estimate.stages.length}`);
  t.check(estimates.length > 0 && estimates.every((c) => /pipeline_stage: 2/.test(c)),
    `each section weighed alone is estimated on the file's run (${estimates.length} requests)`);
  const accept = page.locator('#fit-accept');
  if (!t.check(await accept.count() === 1, 'a proposal to accept')) return;
  await accept.click();
  await t.idle(page);
  const yaml = await page.inputValue('#yaml-text');
  t.check(/^# a run of its own over the model shown$/m.test(yaml) && /pipeline_stage: 2/.test(yaml) && /^context:$/m.test(yaml),
    `accepting puts the proposal's sections in the file, its run and comments kept: ${JSON.stringify(yaml)}`);
  const after = await shownEstimate(page);
  t.check(after.stages.length === 2, `the accepted plan is priced on the same run: ${after.stages.length} stages`);
}

// A saved variant keeps the run it was priced on: saved at TP 1, loaded
// after TP is edited to 2, the page prices TP 1 again (the variant's
// figures are of that run), and the table says each variant's layout.
async function variantKeepsRun(page, base, t) {
  t.setStep('same run: a saved variant loads with its layout');
  await fresh(page, base, t);
  await page.evaluate(() => localStorage.removeItem('memopt.variants'));
  await fresh(page, base, t);
  const save = async (name) => {
    await page.fill('#variant-name', name);
    await page.click('#variant-save');
    await t.idle(page);
  };
  await save('TP1');
  await t.setNumber(page, 'par/tensor_parallel', 2);
  await t.idle(page);
  await save('TP2');
  const layout = await page.$$eval('table.variants tbody tr', (trs) => {
    const tr = trs.find((x) => x.querySelector('th').textContent.replace(' ≠', '') === 'Layout');
    return tr ? { cells: [...tr.querySelectorAll('td')].map((td) => td.textContent), differs: tr.classList.contains('differs') } : null;
  });
  t.check(layout && layout.differs && /TP 2 /.test(layout.cells[0]) && /TP 1 /.test(layout.cells[1]) && /TP 2 /.test(layout.cells[2])
    && /DP 8/.test(layout.cells[1]) && /DP 4/.test(layout.cells[2]), `each column says its layout (Now, TP1, TP2): ${JSON.stringify(layout)}`);
  const saved = await page.evaluate(() => JSON.parse(localStorage.getItem('memopt.variants')).map((v) => v.figures.peak));
  t.check(saved.length === 2 && saved[0] !== saved[1], `the two layouts have two peaks: ${saved}`);
  await page.click('[data-key="variant/load/0"]');
  await t.idle(page);
  const now = await page.evaluate(() => ({
    tp: window.memopt.state.model.obj.parallel.tensor_parallel, peak: window.memopt.state.estimate.data.peak_bytes,
    field: document.querySelector('[data-key="par/tensor_parallel"]').value,
  }));
  t.check(now.tp === 1 && now.field === '1', `Load TP1 brings TP 1 back to the fields: ${JSON.stringify(now)}`);
  t.check(now.peak === saved[0], `the page prices the variant's run: peak ${now.peak}, saved ${saved[0]}`);
  t.check(/TP 1 /.test(await page.textContent('#variant-status')), `the status says the layout loaded: ${await page.textContent('#variant-status')}`);
  await page.click('#undo');
  await t.idle(page);
  t.check(await page.inputValue('[data-key="par/tensor_parallel"]') === '2', 'Undo takes the load back (TP 2)');
  await page.evaluate(() => localStorage.removeItem('memopt.variants'));
}

// t: {check, log, idle, axe, shot, setNumber, setStep, allowStatus, ROOT}
// A training YAML with its own model, its parallel fields edited: the
// download (POST /api/v1/export, as written) carries the edited degrees in
// the file's own keys. master/finetune_llama3_1_8b.yaml (research/llama3_1
// at f52743ca, tests/data/mindformers/SOURCES.tsv) is graph mode with
// parallel_config data_parallel 8 (line 70), model_parallel 1 (line 71),
// pipeline_stage 1 (line 72) and 32 layers: TP and PP 2 on its 8 devices
// leave DP 8 / (2 x 2) = 2. Every other line stays as the file has it.
const LLAMA_FILE = 'tests/data/mindformers/master/finetune_llama3_1_8b.yaml';

async function exportOfEdited(page, base, t) {
  t.setStep('same run: the export of a training YAML whose TP and PP were edited');
  await fresh(page, base, t);
  const name = LLAMA_FILE.split('/').pop();
  const text = readFileSync(join(t.ROOT, LLAMA_FILE), 'utf8');
  await page.setInputFiles('#file', join(t.ROOT, LLAMA_FILE));
  await page.waitForFunction((n) => window.memopt.state.training && window.memopt.state.training.name === n, name);
  await t.idle(page);
  await t.setNumber(page, 'par/tensor_parallel', 2);
  await t.idle(page);
  await t.setNumber(page, 'par/pipeline_parallel', 2);
  await t.idle(page);
  const shown = await page.evaluate(() => ({
    tp: document.querySelector('[data-key="par/tensor_parallel"]').value,
    pp: document.querySelector('[data-key="par/pipeline_parallel"]').value,
    dp: window.memopt.state.model.obj.parallel.data_parallel,
    stages: window.memopt.state.estimate.data.stages.length,
  }));
  t.check(shown.tp === '2' && shown.pp === '2' && shown.dp === 2 && shown.stages === 2,
    `the page prices TP 2, PP 2 (DP 2, two stages): ${JSON.stringify(shown)}`);
  let asked = null;
  const listen = (r) => { if (r.url().endsWith('/api/v1/export')) asked = JSON.parse(r.postData()); };
  page.on('request', listen);
  const [dl] = await Promise.all([page.waitForEvent('download', { timeout: 15000 }), (async () => {
    await page.click('#export');
    if (await page.isVisible('#export-confirm')) await page.click('#export-anyway');
  })()]);
  page.off('request', listen);
  const got = readFileSync(await dl.path(), 'utf8');
  t.check(asked && asked.config === text && asked.form === 'as-written' && sentModel(asked.model).parallel.tensor_parallel === 2,
    `the request carries the file as uploaded and the edited model: ${JSON.stringify(asked && sentModel(asked.model).parallel)}`);
  const want = { 70: `  data_parallel: ${shown.dp}`, 71: `  model_parallel: ${shown.tp}`, 72: `  pipeline_stage: ${shown.pp}` };
  const before = text.split('\n');
  const after = got.split('\n');
  t.check(after.length === before.length, `the download has the file's ${before.length} lines: ${after.length}`);
  for (const [line, row] of Object.entries(want)) {
    t.check(after[line - 1] === row, `line ${line} is "${row}": "${after[line - 1]}"`);
  }
  const changed = before.map((l, i) => (l === after[i] ? null : i + 1)).filter((x) => x !== null);
  t.check(JSON.stringify(changed) === '[70,71,72]', `only lines 70-72 change (use_seq_parallel, micro_batch_num, the comments, recompute_config stay): ${JSON.stringify(changed)}`);
  t.check(/written in its keys/.test(await page.textContent('#export-status')), `the page says the settings are written in: ${await page.textContent('#export-status')}`);
}

export async function sameRunScenarios(page, base, t) {
  for (const s of [ledgerOfEdited, calibrateOfEdited, fitOnFile, variantKeepsRun, exportOfEdited]) {
    try {
      await s(page, base, t);
    } catch (err) {
      t.check(false, `threw: ${String(err.message || err).split('\n')[0]}`);
    }
  }
}
