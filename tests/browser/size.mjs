// The "Size the job" panel against the real server: the search answers a
// table and a chart with one point per layout listed, the MFU column a
// percentage, the fastest fitting layout on the memory / step-time front;
// "Apply" puts a layout's parallel keys and plan in the editor, one step
// of the page's undo; "Save" keeps layouts for a side-by-side comparison
// that marks the rows that differ; a whole training YAML in the editor is
// sent as the base and comes back rewritten.
import { isSizeBase, withSaved, compareRows, nearestPoint } from '../../web/js/size.js';

// The pure parts (node): which texts go as the base, the saved list, the rows.
function units(check) {
  check(isSizeBase('a: 1\nparallel_config:\n  model_parallel: 2\n') && isSizeBase('parallelism:\n  tensor_parallel: 1\n')
    && !isSizeBase('recompute:\n  mode: None\n') && !isSizeBase(null),
  'a training YAML with parallel_config or parallelism goes as the base, nothing else');
  const lay = (tp, peak, config) => ({
    rank: 1, config, model: 'm', peak_bytes: peak, step_seconds: 1, tokens_per_second_per_device: 10, mfu: 0.5, plan: 'none',
    parallel: { tensor_parallel: tp, pipeline_parallel: 1, virtual_pipeline: 1, context_parallel: 1, expert_parallel: 1, data_parallel: 8 / tp, sequence_parallel: false },
    training: { micro_batch_size: 1, micro_batch_num: 2 },
  });
  let saved = withSaved([], lay(1, 2 ** 30, 'a'));
  saved = withSaved(saved, lay(2, 2 ** 30, 'b'));
  saved = withSaved(saved, lay(1, 2 ** 30, 'a'));
  check(saved.length === 2 && saved[1].config === 'a' && !('rank' in saved[0]),
    `the same layout is saved once, the newest last, without its rank (${saved.map((l) => l.config)})`);
  check(nearestPoint([{ x: 0, y: 0 }, { x: 10, y: 10 }, { x: 20, y: 0 }], 12, 7) === 1,
    'the pointer reads the point nearest it');
  const rows = compareRows(saved);
  const by = (label) => rows.find((r) => r.label === label);
  check(by('TP').differs && by('TP').cells.join() === '2,1' && !by('Peak').differs && !rows.some((r) => r.label === 'Rank'),
    'the comparison marks TP as differing, the peak as the same, and has no rank row');
}

async function waitStatus(page) {
  await page.waitForFunction(() => {
    const s = document.querySelector('#size-panel .size-status');
    return s && !/Searching/.test(s.textContent) && s.textContent !== '';
  }, null, { timeout: 120000 });
  return page.textContent('#size-panel .size-status');
}

let answer = null;   // the last POST /api/v1/size answer the page got

async function search(page, devices, batch) {
  await page.fill('#size-devices', String(devices));
  await page.fill('#size-batch', String(batch));
  const got = page.waitForResponse((r) => r.url().endsWith('/api/v1/size') && r.request().method() === 'POST', { timeout: 120000 });
  await page.click('#size-panel button[type=submit]');
  const r = await got;
  answer = r.ok() ? await r.json() : null;
  return waitStatus(page);
}

const parInput = (page, key) => page.inputValue(`#parallel [data-key="par/${key}"]`);

// The row's TP, CP and micro-batch size cells (columns of size.js).
async function rowDegrees(row) {
  const cells = row.locator('td');
  return { tp: await cells.nth(1).textContent(), cp: await cells.nth(4).textContent(), mbs: await cells.nth(8).textContent() };
}

// Sorting: a column header sorts the rows by it, a second click the
// other way, aria-sort saying which.
async function sortable(page, check) {
  const steps = () => page.locator('#size-panel table.size-table tbody tr').evaluateAll((trs) => trs.map((tr) => Number(tr.cells[11].textContent)));
  const head = page.locator('#size-panel table.size-table thead th').nth(11);
  await head.locator('button.size-sort').click();
  const up = await steps();
  check(up.every((v, i) => i === 0 || up[i - 1] <= v) && await head.getAttribute('aria-sort') === 'ascending',
    `the Step column sorts the rows ascending (${up.join(', ')})`);
  await page.locator('#size-panel table.size-table thead th').nth(11).locator('button.size-sort').click();
  const down = await steps();
  check(down.every((v, i) => i === 0 || down[i - 1] >= v)
    && await page.locator('#size-panel table.size-table thead th').nth(11).getAttribute('aria-sort') === 'descending',
  `a second click sorts it descending (${down.join(', ')})`);
  await page.locator('#size-panel table.size-table thead th').nth(0).locator('button.size-sort').click();
  const ranks = await page.locator('#size-panel table.size-table tbody tr').evaluateAll((trs) => trs.map((tr) => Number(tr.cells[0].textContent)));
  check(ranks.every((v, i) => v === i + 1), `the Rank column puts the answer's order back (${ranks.join(', ')})`);
}

// The chart's read-out: the keyboard walks the layouts in rank order, the
// pointer reads the point under it; each read-out names the layout's row.
async function chartReadout(page, check) {
  const wrap = page.locator('#size-panel .chart-read');
  check(await wrap.count() === 1 && await wrap.getAttribute('tabindex') === '0', 'the chart takes the keyboard focus');
  if (await wrap.count() !== 1) return;
  await wrap.focus();
  await page.keyboard.press('Home');
  const row = (i) => page.locator('#size-panel table.size-table tbody tr').nth(i).locator('td');
  const first = await page.textContent('#size-readout');
  const peak1 = await row(0).nth(10).textContent(), step1 = await row(0).nth(11).textContent();
  check(/^Rank 1: /.test(first) && first.includes(`peak ${peak1}`) && first.includes(`step ${step1} s`),
    `Home reads the first layout, its peak and step time as in its row (${first})`);
  await page.keyboard.press('ArrowRight');
  const second = await page.textContent('#size-readout');
  check(/^Rank 2: /.test(second) && await wrap.getAttribute('aria-valuenow') === '2',
    `ArrowRight reads the next layout (${second})`);
  const n = await page.locator('#size-panel svg.size-chart circle').count();
  const last = page.locator('#size-panel svg.size-chart circle').nth(n - 1);
  const box = await last.boundingBox();
  await page.mouse.move(box.x + box.width / 2, box.y + box.height / 2);
  const hovered = await page.textContent('#size-readout');
  const lastRank = (await last.locator('title').textContent()).match(/^rank (\d+)/)[1];
  const shown = await page.locator('#size-panel svg.size-chart circle.size-point-on').count();
  check(hovered.startsWith(`Rank ${lastRank}: `) && shown === 1,
    `the pointer on a point reads that layout and marks it (${hovered}; ${shown} marked)`);
}

// A device-count range: the smallest count that fits, as the API answers it.
async function deviceRange(page, base, check) {
  const sent = page.waitForRequest((r) => r.url().endsWith('/api/v1/size') && r.method() === 'POST');
  const status = await search(page, '1-16', 16);
  const body = JSON.parse((await sent).postData());
  const m = /the smallest device count that fits: (\d+)/.exec(status);
  const api = await (await page.request.post(new URL('/api/v1/size', base).href, { data: body })).json();
  check(body.devices === '1-16' && m !== null && Number(m[1]) === api.smallest_devices,
    `a device range answers the smallest count that fits, as the API does (${status}; API: ${api.smallest_devices})`);
  const rows = await page.locator('#size-panel table.size-table tbody tr').count();
  check(rows === api.layouts.length && rows > 0, `the range lists the API's layouts (${rows} rows, ${api.layouts.length} layouts)`);
}

// The budget field: sent in bytes; a budget below every layout's peak
// leaves no layout, and the status says none fits (not "0 of the 0").
async function budget(page, check) {
  await page.fill('#size-budget', '0.5');
  const sent = page.waitForRequest((r) => r.url().endsWith('/api/v1/size') && r.method() === 'POST');
  const status = await search(page, 8, 16);
  const body = JSON.parse((await sent).postData());
  const rows = await page.locator('#size-panel table.size-table tbody tr').count();
  check(body.budget === 2 ** 29 && /no layout fits the budget per device/.test(status) && rows === 0
    && await page.locator('#size-panel svg.size-chart').count() === 0,
  `a 0.5 GiB budget goes as ${body.budget} bytes and the panel says no layout fits it (${status}; ${rows} rows)`);
  await page.fill('#size-budget', '');
}

async function applyAndUndo(page, check) {
  const before = { yaml: await page.inputValue('#yaml-text'), tp: await parInput(page, 'tensor_parallel'),
    cp: await parInput(page, 'context_parallel'), mbs: await parInput(page, 'micro_batch_size') };
  const rows = page.locator('#size-panel table.size-table tbody tr');
  const n = await rows.count();
  let pick = -1, want = null;
  for (let i = 0; i < n && pick < 0; i++) {
    const d = await rowDegrees(rows.nth(i));
    if (d.tp !== before.tp || d.cp !== before.cp || d.mbs !== before.mbs) { pick = i; want = d; }
  }
  check(pick >= 0, `a listed layout differs from the editor's (TP ${before.tp}, CP ${before.cp}, micro-batch ${before.mbs})`);
  if (pick < 0) return;
  await rows.nth(pick).locator('button.size-apply').click();
  await page.waitForFunction(() => /Applied|could not/.test(document.querySelector('#size-panel .size-status').textContent), null, { timeout: 60000 });
  const after = { tp: await parInput(page, 'tensor_parallel'), cp: await parInput(page, 'context_parallel'), mbs: await parInput(page, 'micro_batch_size') };
  check(after.tp === want.tp && after.cp === want.cp && after.mbs === want.mbs,
    `Apply sets the editor's parallel keys to the layout's (${JSON.stringify(after)} for ${JSON.stringify(want)})`);
  const yaml = await page.inputValue('#yaml-text');
  const rank = Number(await rows.nth(pick).locator('td').first().textContent());
  const config = answer && answer.layouts[rank - 1] ? answer.layouts[rank - 1].config : null;
  check(/^recompute:/m.test(yaml) && yaml === config,
    `Apply puts the layout's memory sections in the YAML panel, the answer's config byte for byte (rank ${rank})`);
  await page.click('#undo');
  await page.waitForFunction((tp) => document.querySelector('#parallel [data-key="par/tensor_parallel"]').value === tp
    && document.querySelector('#parallel [data-key="par/context_parallel"]').value !== undefined, before.tp, { timeout: 30000 });
  const undone = { yaml: await page.inputValue('#yaml-text'), tp: await parInput(page, 'tensor_parallel'),
    cp: await parInput(page, 'context_parallel'), mbs: await parInput(page, 'micro_batch_size') };
  check(JSON.stringify(undone) === JSON.stringify(before), 'one Undo takes the applied layout back (the YAML and the parallel keys)');
}

async function saveAndCompare(page, check) {
  const rows = page.locator('#size-panel table.size-table tbody tr');
  await rows.nth(0).locator('button.size-save').click();
  await rows.nth(1).locator('button.size-save').click();
  const cols = await page.locator('#size-panel table.size-compare thead th').count();
  check(cols >= 3, `two saved layouts side by side (${cols - 1} columns)`);
  const differs = await page.locator('#size-panel table.size-compare tbody tr.differs').count();
  check(differs >= 1, `the rows where the saved layouts differ are marked (${differs})`);
  await page.reload();
  await page.waitForSelector('#size-panel table.size-compare');
  const kept = await page.locator('#size-panel table.size-compare thead th').count();
  check(kept === cols, `the saved layouts are kept in this browser (${kept - 1} after a reload)`);
  while (await page.locator('#size-panel button.size-remove').count()) {
    await page.locator('#size-panel button.size-remove').first().click();
  }
  check(await page.locator('#size-panel table.size-compare').count() === 0, 'Remove takes the saved layouts away');
}

// A graph-mode training YAML typed into the YAML panel (the preset's
// model): sent as the base, the applied config is the file rewritten.
async function baseRewritten(page, check, idle) {
  const base = [
    '# a training file: this comment and the keys below stay',
    'runner_config:',
    '  batch_size: 1',
    'parallel_config:',
    '  data_parallel: 8',
    '  model_parallel: 1',
    '  pipeline_stage: 1',
    '  micro_batch_num: 1',
    'parallel:',
    '  enable_parallel_optimizer: True',
    'model:',
    '  model_config:',
    '    num_layers: 32',
    'recompute:',
    '  mode: None',
    '',
  ].join('\n');
  await page.fill('#yaml-text', base);
  await idle(page);
  const status = await search(page, 8, 16);
  check(!/failed/.test(status), `the search with the training YAML as the base answers (${status})`);
  await page.locator('#size-panel table.size-table tbody tr').first().locator('button.size-apply').click();
  await page.waitForFunction(() => /Applied|could not/.test(document.querySelector('#size-panel .size-status').textContent), null, { timeout: 60000 });
  const yaml = await page.inputValue('#yaml-text');
  check(yaml.startsWith('# a training file: this comment and the keys below stay\nrunner_config:\n  batch_size: ')
    && /^parallel_config:\n {2}data_parallel: \d+\n {2}model_parallel: \d+/m.test(yaml) && /^ {4}num_layers: 32$/m.test(yaml),
  `the applied config is the training YAML rewritten, its comment and other keys kept:\n${yaml}`);
}

export async function sizeScenarios(page, base, { check, log, idle, axe, shot, setStep }) {
  setStep('size the job');
  units(check);
  await page.goto(base);
  await idle(page);
  await page.evaluate(() => localStorage.removeItem('memopt.size.saved'));
  const status = await search(page, 8, 16);
  if (/failed/.test(status) && /501|not available|estimator/i.test(status)) {
    log(`size: the server has no estimator (${status}): the panel's chart is not checked`);
    return;
  }
  const rows = await page.locator('#size-panel table.size-table tbody tr').count();
  const points = await page.locator('#size-panel svg.size-chart circle').count();
  check(rows > 0 && points === rows, `the chart has a point per layout listed (${points} points, ${rows} rows)`);
  const mfu = await page.locator('#size-panel table.size-table tbody tr').first().locator('td').nth(13).textContent();
  check(/^\d+\.\d%$/.test(mfu), `the first layout's MFU cell is a percentage (${mfu})`);
  const plans = await page.locator('#size-panel table.size-table tbody tr').evaluateAll((trs) => trs.map((tr) => tr.cells[14].textContent));
  check(plans.every((p) => /^none$|recompute|swap/.test(p)), `each layout's Plan cell says what it recomputes or swaps (${plans.slice(0, 3).join('; ')})`);
  const front = await page.locator('#size-panel svg.size-chart circle[r="5"]').count();
  check(front >= 1, `the front's points are drawn larger (${front})`);
  const title = await page.locator('#size-panel svg.size-chart circle').first().locator('title').textContent();
  check(/^rank 1/.test(title), `each point names its rank (${title})`);
  const codes = await page.locator('#size-panel .size-rejected li[data-code] code').allTextContents();
  check(codes.length > 0 && codes.every((c) => /^[a-z_]+$/.test(c)),
    `each group of rejected layouts shows its rule's code (${codes.slice(0, 4).join(', ')})`);
  setStep('size the job: sorting');
  await sortable(page, check);
  setStep('size the job: the chart read-out');
  await chartReadout(page, check);
  for (const width of [1280, 360]) {
    await page.setViewportSize({ width, height: 900 });
    await axe(page, `size chart at ${width} px`);
    await shot(page, `size-chart-${width}`);
  }
  await page.setViewportSize({ width: 1280, height: 900 });
  setStep('size the job: a device-count range');
  await deviceRange(page, base, check);
  setStep('size the job: the budget');
  await budget(page, check);
  await search(page, 8, 16);
  setStep('size the job: apply and undo');
  await applyAndUndo(page, check);
  setStep('size the job: saved layouts side by side');
  await saveAndCompare(page, check);
  await search(page, 8, 16);
  await axe(page, 'size saved layouts');
  setStep('size the job: a training YAML as the base');
  await baseRewritten(page, check, idle);
}
