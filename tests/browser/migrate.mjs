// Browser test of the migrate offer on a real graph-mode
// file: tests/data/mindformers/master/finetune_glm4_9b.yaml (MindSpore
// Transformers configs/glm4/finetune_glm4_9b.yaml at f52743ca, see
// SOURCES.tsv). Read from the file: context.mode 0 (graph), 40 layers,
// pipeline_stage 4 with offset [-1, 0, 2, -1] (stages of 9, 10, 12, 9
// layers starting at 0, 9, 19, 31), recompute_config (lines 144-149) with
// recompute [6, 3, 2, 3] -> the first 6, 3, 2, 3 layers of each stage:
// 0-5, 9-11, 19-20, 31-33; mp_comm_recompute and
// recompute_slice_activation True have no equivalent in the sections.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

const FILE = 'tests/data/mindformers/master/finetune_glm4_9b.yaml';
// configs/llama3_1/finetune_llama3_1_8b.yaml (same commit): graph mode,
// 32 layers on one stage, recompute_config (lines 81-86) `recompute: True`
// -> 0-31.
const PASTED = 'tests/data/mindformers/master/finetune_llama3_1_8b.yaml';

// t: {check, log, idle, axe, shot, setStep, ROOT}
export async function migrateScenarios(page, base, t) {
  const { check } = t;
  t.setStep('migrate: a graph-mode glm4 file uploaded');
  await page.goto('about:blank');
  await page.goto(base);
  await t.idle(page);
  const original = readFileSync(join(t.ROOT, FILE), 'utf8');
  check(await page.isHidden('#migrate'), 'no offer for the default config');
  await page.setInputFiles('#file', join(t.ROOT, FILE));
  await page.waitForFunction(() => window.memopt.state.model.label === 'finetune_glm4_9b.yaml');
  await t.idle(page);
  const offer = page.locator('#migrate-accept');
  check(await offer.isVisible(), 'the offer appears for the graph-mode file');
  check(/Migrate recompute_config to recompute \/ recompute_comm/.test(await offer.textContent()), `the offer's words: ${await offer.textContent()}`);
  const dropped = await page.$$eval('#migrate .migrate-dropped li code', (cs) => cs.map((c) => c.textContent));
  check(JSON.stringify(dropped) === JSON.stringify(['mp_comm_recompute', 'recompute_slice_activation']),
    `the offer lists the two keys without an equivalent: ${JSON.stringify(dropped)}`);
  const droppedText = await page.textContent('#migrate .migrate-dropped');
  check(/line 148: /.test(droppedText) && /line 149: /.test(droppedText), `with their lines (148, 149): ${droppedText}`);
  const uploaded = await page.inputValue('#yaml-text');
  await t.axe(page, 'migrate offer');
  await offer.click();
  await page.waitForFunction(() => !/^recompute_config/m.test(document.querySelector('#yaml-text').value));
  await t.idle(page);
  // the YAML panel holds the whole file: the block is replaced in place, every other line kept
  const text = await page.inputValue('#yaml-text');
  const lines = original.split('\n');
  const expected = [...lines.slice(0, 143), 'recompute:', '  mode: full',
    '  full_recompute_layer: [0-5, 9-11, 19-20, 31-33]', ...lines.slice(149)].join('\n');
  check(uploaded === original, 'the YAML panel held the uploaded file whole');
  check(lines[143] === 'recompute_config:' && text === expected,
    'the file has the block replaced by the section with the file\'s layers, every other line kept');
  check(await page.isHidden('#migrate'), 'the offer is gone once the block is');
  const status = await page.textContent('#migrate-status');
  check(/mp_comm_recompute, recompute_slice_activation/.test(status), `the status names the dropped keys: ${status}`);
  check(/valid/.test(await page.textContent('#diag-summary')) && !/error/.test(await page.textContent('#diag-summary')),
    `the migrated plan is valid: ${await page.textContent('#diag-summary')}`);
  const full = await page.$$eval('#layer-map tbody tr', (trs) => trs.filter((tr) => /recompute/.test((tr.querySelector('td[data-col="full"]') || {}).textContent || '')).map((tr) => Number(tr.dataset.layer)));
  const want = [0, 1, 2, 3, 4, 5, 9, 10, 11, 19, 20, 31, 32, 33];
  check(JSON.stringify(full) === JSON.stringify(want), `the layer map recomputes 0-5, 9-11, 19-20, 31-33 in full: ${JSON.stringify(full)}`);
  await t.axe(page, 'migrated');
  await page.click('#undo');
  await t.idle(page);
  check(await page.inputValue('#yaml-text') === original, 'Undo restores the uploaded file');
  check(await page.locator('#migrate-accept').isVisible(), 'and the offer is back');

  t.setStep('migrate: a graph-mode llama3.1 file pasted into the YAML panel');
  await page.goto('about:blank');
  await page.goto(base);
  await t.idle(page);
  const pasted = readFileSync(join(t.ROOT, PASTED), 'utf8');
  await page.locator('#yaml-text').focus();
  await page.keyboard.press('Control+A');
  await page.keyboard.insertText(pasted);
  await page.waitForFunction(() => window.memopt.state.migrate && window.memopt.state.migrate.data, null, { timeout: 20000 });
  await t.idle(page);
  check(await page.locator('#migrate-accept').isVisible(), 'the offer appears for the pasted file');
  await page.click('#migrate-accept');
  await page.waitForFunction(() => !/^recompute_config/m.test(document.querySelector('#yaml-text').value));
  await t.idle(page);
  const pl = pasted.split('\n');
  const migrated = [...pl.slice(0, 80), 'recompute:', '  mode: full', '  full_recompute_layer: [0-31]', ...pl.slice(86)].join('\n');
  check(pl[80] === 'recompute_config:' && await page.inputValue('#yaml-text') === migrated,
    'the YAML panel holds the pasted file with the block replaced by recompute 0-31');
  await page.keyboard.press('Control+Z');
  await t.idle(page);
  check(await page.inputValue('#yaml-text') === pasted, 'Ctrl+Z gives the pasted file back');
}
