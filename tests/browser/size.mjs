// The "Size the job" panel against the real server: the search answers a
// table and a chart with one point per layout listed, the MFU column a
// percentage, the fastest fitting layout on the memory / step-time front.
export async function sizeScenarios(page, base, { check, log, idle, axe, shot, setStep }) {
  setStep('size the job');
  await page.goto(base);
  await idle(page);
  await page.fill('#size-devices', '8');
  await page.fill('#size-batch', '16');
  await page.click('#size-panel button[type=submit]');
  await page.waitForFunction(() => {
    const s = document.querySelector('#size-panel .size-status');
    return s && !/Searching/.test(s.textContent) && s.textContent !== '';
  }, null, { timeout: 120000 });
  const status = await page.textContent('#size-panel .size-status');
  if (/failed/.test(status) && /501|not available|estimator/i.test(status)) {
    log(`size: the server has no estimator (${status}): the panel's chart is not checked`);
    return;
  }
  const rows = await page.locator('#size-panel table.size-table tbody tr').count();
  const points = await page.locator('#size-panel svg.size-chart circle').count();
  check(rows > 0 && points === rows, `the chart has a point per layout listed (${points} points, ${rows} rows)`);
  const mfu = await page.locator('#size-panel table.size-table tbody tr').first().locator('td').nth(13).textContent();
  check(/^\d+\.\d%$/.test(mfu), `the first layout's MFU cell is a percentage (${mfu})`);
  const front = await page.locator('#size-panel svg.size-chart circle[r="5"]').count();
  check(front >= 1, `the front's points are drawn larger (${front})`);
  const title = await page.locator('#size-panel svg.size-chart circle').first().locator('title').textContent();
  check(/^rank 1/.test(title), `each point names its rank (${title})`);
  await axe(page, 'size chart');
  await shot(page, 'size-chart');
}
