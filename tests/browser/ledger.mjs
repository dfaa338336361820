// Browser tests of the "Measured against estimated" panel: a
// real trimmed MindSpore ledger (tests/data/ledger/pp2-stage0-optimizer.csv,
// DSv3-mini pp 2 stage 0, see its README) picked with the model file of its
// run. The expected figures come from the README and
// notes/ledger-decode-pp2-stage0.md, not from memopt: the peak is the
// allocator's total 10246.244140625 MiB at the row `Mul,904960.5,...` (line
// 8), with four 904960.5 KB (883.75 MiB) AdamW temporaries alive: two Muls,
// one Mul, one Sub (4 x 883.75 = 3535.00 MiB of transients).
import { join } from 'node:path';

const LEDGER = 'tests/data/ledger/pp2-stage0-optimizer.csv';
const MODEL = 'tests/data/ledger/dsv3-8l-pp2.yaml';

async function settled(page) {
  await page.waitForFunction(() => ['done', 'error'].includes(document.querySelector('#ledger').dataset.state), null, { timeout: 20000 });
}

async function rowsOf(page, cls) {
  return page.$$eval(`#ledger table.${cls} tbody tr`, (trs) => trs.map((tr) => [...tr.children].map((c) => c.textContent)));
}

// The x of each vertex of a step path ("M x,y H x V y H x ..."), in order.
function pathXs(d) {
  return [...d.matchAll(/(?:M(-?[\d.]+),-?[\d.]+|H(-?[\d.]+))/g)].map((m) => Number(m[1] ?? m[2]));
}

// Measured and estimated on one time axis: the estimate's events carry the
// step-time model's times (start_seconds, seconds), the chart draws both
// curves at the same pixels per second, the estimated peak on the measured
// one (the trace marks no step start), and the read-out gives both values
// at one time. The page before drew the estimate event by event on a lane
// of its own.
async function oneTimeAxis(page, t, estFig) {
  t.setStep('ledger: measured and estimated on one time axis');
  const events = await page.evaluate(() => {
    const est = window.memopt.state.estimate.data;
    const st = est.stages.find((s) => s.stage === 0);
    return st && st.timeline ? st.timeline : [];
  });
  const timed = events.filter((e) => Number.isFinite(e.start_seconds) && Number.isFinite(e.seconds));
  t.check(events.length > 0 && timed.length === events.length, `every estimated event of stage 0 has a start and a duration (${timed.length} of ${events.length})`);
  t.check(timed.every((e, i) => i === 0 || e.start_seconds >= timed[i - 1].start_seconds + timed[i - 1].seconds - 1e-12),
    'the events follow each other in time');
  const g = await page.evaluate(() => {
    const s = document.querySelector('#ledger svg.ledger-timeline');
    const d = (cls) => { const p = s && s.querySelector(`path.curve.${cls}`); return p ? p.getAttribute('d') : ''; };
    const cx = (cls) => { const c = s && s.querySelector(`circle.peakdot.${cls}`); return c ? Number(c.getAttribute('cx')) : null; };
    return {
      axes: s ? s.querySelectorAll('g.x-axis').length : 0,
      ticks: s ? [...s.querySelectorAll('g.x-axis text.tick')].map((x) => x.textContent) : [],
      measured: d('measured'), estimated: d('estimated'), mx: cx('measured'), ex: cx('estimated'),
      label: s ? s.getAttribute('aria-label') : '',
      curve: window.memopt.state.ledger.data.curve,
    };
  });
  t.check(g.axes === 1 && g.ticks.length >= 3 && g.ticks.every((x) => / ms$/.test(x)), `one time axis in ms: ${g.axes} axes, ticks ${g.ticks.join(' ')}`);
  const mxs = pathXs(g.measured);
  const exs = pathXs(g.estimated);
  if (t.check(mxs.length === g.curve.length && exs.length === timed.length + 1, `a vertex per measured row (${mxs.length} of ${g.curve.length}) and per estimated event and the step's end (${exs.length} of ${timed.length + 1})`)) {
    const last = timed[timed.length - 1];
    const perSecM = (mxs[mxs.length - 1] - mxs[0]) / ((g.curve[g.curve.length - 1].time_us - g.curve[0].time_us) / 1e6);
    const perSecE = (exs[exs.length - 1] - exs[0]) / (last.start_seconds + last.seconds - timed[0].start_seconds);
    t.check(Math.abs(perSecE / perSecM - 1) < 0.005, `the same pixels per second: measured ${perSecM.toFixed(1)}, estimated ${perSecE.toFixed(1)}`);
    // each estimated vertex where its event starts on that scale
    const off = exs.map((x, i) => x - exs[0] - perSecM * ((i < timed.length ? timed[i].start_seconds : last.start_seconds + last.seconds) - timed[0].start_seconds));
    t.check(off.every((v) => Math.abs(v) < 0.2), `every estimated event at its start time (largest miss ${Math.max(...off.map(Math.abs)).toFixed(2)} px)`);
  }
  t.check(g.mx !== null && g.ex !== null && Math.abs(g.mx - g.ex) < 0.2 && /the estimated peak is placed at the measured peak/.test(g.label),
    `no step marker: the estimated peak is placed at the measured peak (x ${g.mx} and ${g.ex}): ${g.label}`);
  const peakEvent = (await page.textContent('#ledger .ledger-peaks')).match(/(forward|backward|loss|embedding|optimizer)[^;]*/)[0];
  const read = await page.textContent('#ledger-readout');
  t.check(read.includes(`10246.24 MiB at 3.5 ms; at that time estimated ${estFig} ("${peakEvent}")`), `the read-out at the measured peak gives both values: ${read}`);
  // the whole estimated step: the same axis, zoomed out
  const view = page.locator('#ledger button.ledger-view');
  if (t.check(await view.count() === 1, 'the estimated step reaches past the rows: a button shows it whole')) {
    await view.click();
    const z = await page.evaluate(() => {
      const s = document.querySelector('#ledger svg.ledger-timeline');
      return { m: s.querySelector('path.curve.measured').getAttribute('d'), e: s.querySelector('path.curve.estimated').getAttribute('d') };
    });
    const zm = pathXs(z.m);
    const ze = pathXs(z.e);
    t.check(Math.min(...zm, ...ze) >= 59.9 && Math.max(...zm, ...ze) <= 628.1 && zm[zm.length - 1] - zm[0] < mxs[mxs.length - 1] - mxs[0],
      `the whole step fits the plot, the rows narrower (${Math.min(...ze).toFixed(1)}-${Math.max(...ze).toFixed(1)} px)`);
    t.check(await page.getAttribute('#ledger button.ledger-view', 'aria-pressed') === 'true', 'the button says it is pressed');
    await page.locator('#ledger button.ledger-view').click();
  }
  for (const width of [390, 360]) {
    await page.setViewportSize({ width, height: 800 });
    await t.axe(page, `ledger one time axis ${width}px`);
  }
  await page.setViewportSize({ width: 1280, height: 900 });
}

// t: {check, log, idle, axe, shot, setStep, allowStatus, ROOT}
export async function ledgerScenarios(page, base, t) {
  t.setStep('ledger: the pp2 stage-0 trace against its model');
  await page.goto('about:blank');
  await page.goto(base);
  await t.idle(page);
  await page.setInputFiles('#file', join(t.ROOT, MODEL));
  await page.waitForFunction(() => window.memopt.state.model.label === 'dsv3-8l-pp2.yaml');
  await t.idle(page);
  await page.fill('#ledger-stage', '0');
  await page.locator('#ledger-stage').blur(); // its change event (nothing to compare yet)
  const requests = [];
  page.on('request', (r) => { if (r.url().endsWith('/api/v1/ledger')) requests.push(r); });
  await page.setInputFiles('#trace-file', join(t.ROOT, LEDGER));
  await settled(page);
  t.check(await page.getAttribute('#ledger', 'data-state') === 'done', `the trace is compared: ${await page.textContent('#ledger')}`);
  t.check(requests.length === 1, `one request to /api/v1/ledger (${requests.length})`);
  const sent = JSON.parse(requests[0].postData() || '{}');
  t.check(sent.stage === 0 && /num_layers/.test(sent.model) && sent.config === await page.inputValue('#yaml-text'),
    'the request carries stage 0, the uploaded model and the current config');
  t.check((await page.textContent('#ledger .measured-peak')) === '10246.24 MiB', `measured peak: ${await page.textContent('#ledger .measured-peak')}`);
  const sub = await page.textContent('#ledger .ledger-peaks dd.sub');
  t.check(/^Mul at line 8, /.test(sub) && /mindspore-csv, 35 rows/.test(sub), `the peak's row is the Mul at line 8 of 35 rows: ${sub}`);
  t.check(/estimated peak, stage 0/.test(await page.textContent('#ledger .ledger-peaks')), 'the estimated peak is of stage 0');
  const buckets = await rowsOf(page, 'buckets');
  t.check(buckets.length === 5, `five bucket rows (${buckets.length})`);
  const total = buckets.find((r) => /total/.test(r[0]));
  t.check(total && total[1] === '10246.24 MiB', `the total row's measured figure is the peak: ${total}`);
  const trans = buckets.find((r) => /transient/.test(r[0]));
  t.check(trans && trans[1] === '3535.00 MiB', `four 883.75 MiB temporaries are the transients: ${trans}`);
  const between = await page.textContent('#ledger .between-steps');
  t.check(/^Between steps/.test(between || '') && /estimated \d+\.\d\d MiB/.test(between || ''), `the between-steps line beside the buckets: ${between}`);
  const um = await rowsOf(page, 'unexplained-measured');
  const big = um.filter((r) => r[1] === '883.75 MiB');
  const count = big.reduce((a, r) => a + Number(r[2]), 0);
  t.check(count === 4 && big.some((r) => r[0] === 'Muls' && r[2] === '2'), `unexplained measured: the two Muls, the Mul and the Sub of 883.75 MiB: ${JSON.stringify(um)}`);
  const ue = await rowsOf(page, 'unexplained-estimated');
  const totals = ue.map((r) => Number(r[5].replace(' MiB', '')));
  t.check(ue.length > 0 && ue.length <= 10 && totals.every((v, i) => i === 0 || v <= totals[i - 1]),
    `the estimated side shows its largest unmatched tensors first: ${JSON.stringify(ue.slice(0, 3))}`);
  // the timeline: both curves, the measured peak's dot on the measured curve's top
  const tl = await page.evaluate(() => {
    const s = document.querySelector('#ledger svg.ledger-timeline');
    if (!s) return null;
    const ys = (d) => [...d.matchAll(/(?:M-?[\d.]+,|V)(-?[\d.]+)/g)].map((m) => Number(m[1]));
    const curve = s.querySelector('path.curve.measured');
    const dot = s.querySelector('circle.peakdot.measured');
    return {
      label: s.getAttribute('aria-label'),
      estimated: !!s.querySelector('path.curve.estimated'),
      top: curve ? Math.min(...ys(curve.getAttribute('d'))) : null,
      dot: dot ? Number(dot.getAttribute('cy')) : null,
    };
  });
  t.check(tl && /measured peak 10246\.24 MiB/.test(tl.label) && /line 8/.test(tl.label), `the timeline names the measured peak: ${tl && tl.label}`);
  t.check(tl && tl.estimated && /estimated peak of stage 0/.test(tl.label), 'the estimated curve of stage 0 is drawn');
  // the estimated curve is /estimate's timeline, the figure /ledger's comparison: the same peak
  const estFig = await page.textContent('#ledger .estimated-peak');
  t.check(tl && tl.label.includes(`estimated peak of stage 0 ${estFig}`), `the estimated curve peaks at the compared estimate (${estFig}): ${tl && tl.label}`);
  t.check(tl && tl.dot !== null && Math.abs(tl.dot - tl.top) < 0.11, `the measured peak is marked at the curve's top (${tl && tl.dot} vs ${tl && tl.top})`);
  await t.axe(page, 'ledger-compared');
  await t.shot(page, '20-ledger-compared');
  await page.locator('#ledger svg.ledger-timeline').screenshot({ path: join(t.ROOT, 'test-output/screenshots/20b-ledger-timeline.png') });
  await page.locator('#ledger').screenshot({ path: join(t.ROOT, 'test-output/screenshots/20c-ledger-panel.png') });

  await oneTimeAxis(page, t, estFig);

  t.setStep('ledger: a changed config makes the comparison stale');
  await page.fill('#yaml-text', 'recompute:\n  mode: full\n  full_recompute_layer: [0-3]\n');
  await t.idle(page);
  t.check(await page.locator('#ledger-again').count() === 1, 'a stale comparison offers "Compare again"');
  await page.click('#ledger-again');
  await page.waitForFunction(() => !document.querySelector('#ledger-again') && document.querySelector('#ledger').dataset.state === 'done', null, { timeout: 20000 });
  t.check(requests.length === 2 && /mode: full/.test(JSON.parse(requests[1].postData()).config), 'compared again with the new config');

  t.setStep('ledger: a memopt trace (JSON lines) dropped on the zone');
  // A 1 MiB (0-10 us), B 2 MiB (1-5 us), C 4 MiB (6.5 us, never freed):
  // at C, B is freed and A + C = 5 MiB alive, the peak, at line 5
  const jsonl = '{"format": "memopt-trace", "version": 1}\n' +
    '{"name": "A", "bytes": 1048576, "alloc_us": 0, "free_us": 10}\n' +
    '{"name": "B", "bytes": 2097152, "alloc_us": 1, "free_us": 5}\n\n' +
    '{"name": "C", "bytes": 4194304, "alloc_us": 6.5, "free_us": null}\n';
  const dt = await page.evaluateHandle((text) => {
    const d = new DataTransfer();
    d.items.add(new File([text], 'small.jsonl', { type: 'application/json' }));
    return d;
  }, jsonl);
  await page.dispatchEvent('#trace-drop', 'dragover', { dataTransfer: dt });
  await page.dispatchEvent('#trace-drop', 'drop', { dataTransfer: dt });
  await page.waitForFunction(() => window.memopt.state.ledger && window.memopt.state.ledger.name === 'small.jsonl');
  await settled(page);
  t.check(await page.textContent('#ledger .measured-peak') === '5.00 MiB', `the dropped trace's peak: ${await page.textContent('#ledger')}`);
  t.check(/^C at line 5, .*memopt-trace, 3 rows/.test(await page.textContent('#ledger .ledger-peaks dd.sub')), 'the peak is the row C at line 5 of 3 rows');
  t.check(!(await page.getAttribute('#trace-drop', 'class')).includes('over'), 'the drop zone is no longer highlighted');

  t.setStep('ledger: a malformed trace shows its line and column');
  t.allowStatus(422);
  const bad = 'Name,Size(KB),Allocation Time(us),Release Time(us)\nA,1,5,9\nB,1,4,9\n';
  await page.setInputFiles('#trace-file', { name: 'bad.csv', mimeType: 'text/csv', buffer: Buffer.from(bad) });
  await settled(page);
  const err = await page.textContent('#ledger');
  t.check(/bad\.csv: line 3, column 1: .*order/.test(err) && /invalid-trace/.test(err), `the error names line 3, column 1: ${err}`);
  t.check(/3 \| B,1,4,9/.test(await page.textContent('#ledger pre.excerpt')), 'the error shows the offending line');
  t.check(await page.locator('#ledger [role="alert"]').count() === 1, 'the error is an alert');
  await t.axe(page, 'ledger-error');
  await t.shot(page, '21-ledger-error');
  t.allowStatus(null);

  t.setStep('ledger: a trace over the size limit is refused before it is read');
  const before = requests.length;
  await page.setInputFiles('#trace-file', { name: 'huge.csv', mimeType: 'text/csv', buffer: Buffer.alloc(1536 * 1024, 'a') });
  await settled(page);
  const huge = await page.textContent('#ledger');
  t.check(/huge\.csv is 1536 KiB: the server takes at most 1024 KiB/.test(huge) && /memopt ledger huge\.csv/.test(huge), `the size error says the limit and the CLI: ${huge}`);
  t.check(requests.length === before, 'nothing was sent');
}
