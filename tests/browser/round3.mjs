// Browser tests, third round: the page tells what the core tells, in its
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

export async function round3(page, base, t) {
  for (const [name, fn] of [['step time', stepTime], ['plain errors', plainErrors]]) {
    t.setStep(`round3: ${name}`);
    try {
      await fn(page, base, t);
    } catch (err) {
      t.check(false, `${err.stack || err}`);
    }
  }
}
