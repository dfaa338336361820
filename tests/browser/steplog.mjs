// Browser tests of the "Measured step time" panel: a training log opened
// or pasted is sent with the page's model and config to POST
// /api/v1/calibrate, and the page shows the log's median step time, the
// modelled one and their ratio. The logs are tests/data/steplog (its
// SOURCES.md gives each line's format string and the medians worked out by
// hand): cli-mindformers.log's time lines are 61023, 130, 92, 91, 93 ms, the
// first two warm-up, median 92 ms; cli-megatron.log's median is 290.65 ms.
// A time that is not a number is refused at its line and column: in
// ' iteration 1/ 2 | elapsed time per iteration (ms): abc |', 'abc' starts
// at column 52 of line 2.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

const MF_LOG = 'tests/data/steplog/cli-mindformers.log';
const MEGATRON_LOG = 'tests/data/steplog/cli-megatron.log';
const BAD_LOG = 'x\n iteration 1/ 2 | elapsed time per iteration (ms): abc |\n';

async function settled(page) {
  await page.waitForFunction(() => ['done', 'error'].includes(document.querySelector('#steplog').dataset.state), null, { timeout: 20000 });
}

// The figures the page shows: the raw value it carries and its text.
async function figures(page) {
  return page.evaluate(() => {
    const f = (cls) => {
      const d = document.querySelector(`#steplog dd.${cls}`);
      return d ? { value: Number(d.dataset.value), text: d.textContent } : null;
    };
    return { measured: f('measured-step'), modelled: f('modelled-step'), ratio: f('step-ratio'), all: document.querySelector('#steplog').textContent };
  });
}

// The API's own answer for the same log, model and config.
async function apiAnswer(page, base, log) {
  const req = await page.evaluate(() => ({ model: JSON.stringify(window.memopt.state.model.obj), config: window.memopt.state.yaml }));
  const r = await fetch(`${base}api/v1/calibrate`, {
    method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ runs: [{ ...req, log }] }),
  });
  return { status: r.status, body: await r.json() };
}

async function fresh(page, base, t) {
  await page.goto('about:blank');
  await page.goto(base);
  await t.idle(page);
}

async function openedLog(page, base, t) {
  const { check } = t;
  t.setStep('steplog: a MindSpore Transformers log opened');
  await fresh(page, base, t);
  await page.setInputFiles('#steplog-file', join(t.ROOT, MF_LOG));
  await settled(page);
  const want = await apiAnswer(page, base, readFileSync(join(t.ROOT, MF_LOG), 'utf8'));
  const run = want.body.runs[0];
  const got = await figures(page);
  check(want.status === 200 && Math.abs(run.log.median_seconds - 0.092) < 1e-12, `the API reads the hand-worked median 92 ms: ${JSON.stringify(run.log)}`);
  check(got.measured && got.measured.value === run.measured_seconds && /^92 ms/.test(got.measured.text), `the page's measured step is the API's ${run.measured_seconds} s: ${JSON.stringify(got.measured)}`);
  check(got.modelled && got.modelled.value === run.estimated_before, `the page's modelled step is the API's ${run.estimated_before} s: ${JSON.stringify(got.modelled)}`);
  const step = await page.evaluate(() => window.memopt.state.estimate.data.time.step_seconds);
  check(Math.abs(run.estimated_before - step) < 1e-9 * step, `the modelled step is the memory panel's step time ${step} s`);
  const ratio = run.measured_seconds / run.estimated_before;
  check(got.ratio && got.ratio.value === ratio && got.ratio.text.includes(ratio.toFixed(3)), `the ratio is measured / modelled = ${ratio.toFixed(3)}: ${JSON.stringify(got.ratio)}`);
  check(/median of 3 time lines of cli-mindformers\.log/.test(got.all), `the page says which lines the median is of: ${got.all.slice(0, 300)}`);
  check(/warm-up/.test(got.all) && /line 1 \(iteration 1\): 61\.02 s/.test(got.all), `the warm-up lines left out are named: ${got.all.slice(0, 400)}`);
  check(!/runs\[|measured_seconds|estimated_before/.test(got.all), 'in the page\'s words, no request or answer member');
  await t.axe(page, 'step time compared');
  await t.shot(page, 'steplog-compared');

  t.setStep('steplog: the comparison goes stale when the config changes');
  await page.fill('#yaml-text', 'recompute:\n  mode: full\n  full_recompute_layer: [0-7]\n');
  await t.idle(page);
  check(await page.locator('#steplog-again').count() === 1, 'an earlier model or config: Compare again is offered');
  await page.click('#steplog-again');
  await settled(page);
  const again = await apiAnswer(page, base, readFileSync(join(t.ROOT, MF_LOG), 'utf8'));
  const now = await figures(page);
  check(now.modelled.value === again.body.runs[0].estimated_before && now.modelled.value > run.estimated_before,
    `compared again: the recompute config's modelled step ${now.modelled.value} s (was ${run.estimated_before} s)`);
  check(await page.locator('#steplog-again').count() === 0, 'no longer stale');
}

async function pastedLog(page, base, t) {
  const { check } = t;
  t.setStep('steplog: a Megatron-LM log pasted');
  await fresh(page, base, t);
  const text = readFileSync(join(t.ROOT, MEGATRON_LOG), 'utf8');
  await page.fill('#steplog-text', text);
  await page.click('#steplog-send');
  await settled(page);
  const want = await apiAnswer(page, base, text);
  const got = await figures(page);
  check(Math.abs(want.body.runs[0].log.median_seconds - 0.29065) < 1e-12, `the API's median is the hand-worked 290.65 ms: ${want.body.runs[0].log.median_seconds}`);
  check(got.measured && got.measured.value === want.body.runs[0].measured_seconds, `the page's measured step is the API's: ${JSON.stringify(got.measured)}`);
  check(got.modelled && got.modelled.value === want.body.runs[0].estimated_before, `the page's modelled step is the API's: ${JSON.stringify(got.modelled)}`);
  check(/the pasted log/.test(got.all) && /Megatron-LM/.test(got.all), `a pasted log is named so, with its format: ${got.all.slice(0, 200)}`);
}

async function badLog(page, base, t) {
  const { check } = t;
  t.setStep('steplog: a log with a time that is not a number');
  await fresh(page, base, t);
  t.allowStatus(422);
  await page.fill('#steplog-text', BAD_LOG);
  await page.click('#steplog-send');
  await settled(page);
  t.allowStatus(null);
  const want = await apiAnswer(page, base, BAD_LOG);
  check(want.status === 422 && want.body.line === 2 && want.body.column === 52, `the API refuses it at 2:52: ${JSON.stringify(want.body)}`);
  const alert = await page.textContent('#steplog [role="alert"]');
  const detail = want.body.detail.replace(/^runs\[0\]\.log: /, '');
  check(alert.includes('Line 2, column 52 of the pasted log') && alert.includes(detail), `the error at its line and column, in the API's words: ${alert}`);
  check(!/runs\[0\]/.test(alert), `no request member in the message: ${alert}`);
  const excerpt = await page.textContent('#steplog pre.excerpt');
  const caret = excerpt.split('\n')[1].indexOf('^') - '     | '.length + 1;
  check(/elapsed time per iteration \(ms\): abc/.test(excerpt) && caret === 52, `the line is shown with a caret at column 52 (${caret}): ${excerpt}`);
  check(await page.locator('#steplog dd.measured-step').count() === 0, 'no figure for a log that was refused');
  await t.axe(page, 'step time error');
  await t.shot(page, 'steplog-error');

  t.setStep('steplog: nothing to send');
  await page.fill('#steplog-text', '');
  await page.click('#steplog-send');
  await settled(page);
  check(/There is no log/.test(await page.textContent('#steplog')), 'an empty field says there is no log');
}

// t: {check, log, idle, axe, shot, setStep, allowStatus, ROOT}
export async function steplogScenarios(page, base, t) {
  for (const s of [openedLog, pastedLog, badLog]) {
    try {
      await s(page, base, t);
    } catch (err) {
      t.check(false, `threw: ${String(err.message || err).split('\n')[0]}`);
    }
  }
}
