// Unit tests of the web UI's pure functions, run by node before the browser
// suite: the control edits that keep the user's text (edit.js), the line
// diff (diff.js), the strip's range arithmetic (strip.js), where a new
// range goes (controls.js) and the undo history (store.js). Expected texts
// are written by hand from the YAML they edit.
import { editConfigText } from '../../web/js/edit.js';
import { lineDiff } from '../../web/js/diff.js';
import { addLayers, removeLayers } from '../../web/js/strip.js';
import { freeRange } from '../../web/js/controls.js';
import { analyze, pathAtLine, targetKey } from '../../web/js/diags.js';
import { emptyConfig } from '../../web/js/state.js';
import { thin, stepPath, traceSizeProblem, ledgerRequest, estimatedPlacement, estimatedPoints, ticks } from '../../web/js/ledger.js';
import { store, record, undo, redo, resetHistory, historyState } from '../../web/js/store.js';
import { sizeRequest, sortedRows, mfuText, chartPoints } from '../../web/js/size.js';
import { howToGive, problemText } from '../../web/js/api.js';
import { calibrateRequest } from '../../web/js/steplog.js';
import { requestModel } from '../../web/js/model.js';
import { freshConfig } from '../../web/js/fit.js';
import { carriesRun } from '../../web/js/state.js';

let failures = 0;
let count = 0;
function eq(actual, expected, what) {
  count += 1;
  const a = JSON.stringify(actual);
  const e = JSON.stringify(expected);
  if (a !== e) {
    failures += 1;
    console.log(`FAIL: ${what}\n  expected ${e}\n  actual   ${a}`);
  }
}

function cfgWith(f) {
  const c = emptyConfig();
  f(c);
  return c;
}

// ---- edit.js ---------------------------------------------------------------------------

{
  const text = '# plan\nrecompute:\n  mode: full  # whole layers\n  # the first layers\n  full_recompute_layer: [0-3]\nswap:\n  enable: False\n';
  const before = cfgWith((c) => { c.recompute.mode = 'full'; c.recompute.full = [[0, 3]]; });
  const after = cfgWith((c) => { c.recompute.mode = 'full'; c.recompute.full = [[0, 4]]; });
  eq(editConfigText(text, before, after), text.replace('[0-3]', '[0-4]'), 'a range edit rewrites its line only');
  const modeSel = cfgWith((c) => { c.recompute.mode = 'select'; c.recompute.full = [[0, 3]]; });
  eq(editConfigText(text, before, modeSel), text.replace('mode: full  # whole layers', 'mode: select  # whole layers'),
    'a scalar keeps the comment at its end');
}
{
  const text = 'recompute:\n  mode: select\n  select_module:\n    \'.*mlp\': [0-1]\n  # the end\n';
  const before = cfgWith((c) => { c.recompute.mode = 'select'; c.recompute.select = [{ pattern: '.*mlp', ranges: [[0, 1]] }]; });
  const after = cfgWith((c) => {
    c.recompute.mode = 'select';
    c.recompute.select = [{ pattern: '.*mlp', ranges: [[0, 1]] }];
    c.recompute.exclude = [{ pattern: '.*act', ranges: [[0, 0]] }];
  });
  eq(editConfigText(text, before, after),
    'recompute:\n  mode: select\n  select_module:\n    \'.*mlp\': [0-1]\n  exclude_op:\n    \'.*act\': [0]\n  # the end\n',
    'a new key goes after the keys before it in the seed\'s order, before trailing comments');
  const none = cfgWith((c) => { c.recompute.mode = 'select'; });
  eq(editConfigText(text, before, none), 'recompute:\n  mode: select\n  # the end\n', 'an emptied list removes its key');
}
{
  const text = 'swap: {enable: True, layer_swap: [{layers: [1]}]}\n';
  const before = cfgWith((c) => { c.swap.enable = true; c.swap.layerSwap = [{ ranges: [[1, 1]] }]; });
  const after = cfgWith((c) => { c.swap.enable = true; c.swap.layerSwap = [{ ranges: [[1, 2]] }]; });
  eq(editConfigText(text, before, after), 'swap:\n  enable: True\n  layer_swap:\n    - layers: [1-2]\n',
    'a flow-style section is rewritten whole');
}
{
  const text = 'recompute:\n    mode: full\n    full_recompute_layer: [0]\n';
  const before = cfgWith((c) => { c.recompute.mode = 'full'; c.recompute.full = [[0, 0]]; });
  const after = cfgWith((c) => { c.recompute.mode = 'full'; c.recompute.full = [[0, 0]]; c.recompute.select = [{ pattern: 'mlp', ranges: [[1, 1]] }]; });
  eq(editConfigText(text, before, after),
    'recompute:\n    mode: full\n    full_recompute_layer: [0]\n    select_module:\n      \'mlp\': [1]\n',
    'new keys take the section\'s indentation');
}
{
  const text = 'recompute:\n  mode: None\n';
  const before = emptyConfig();
  const after = cfgWith((c) => { c.comm.enable = true; });
  eq(editConfigText(text, before, after), 'recompute:\n  mode: None\nrecompute_comm:\n  enable: True\n', 'an absent section is appended');
}
{
  // a whole training YAML: the controls edit its section in place, every other line stays
  const training = 'a: 1\nrecompute:\n  mode: select # why\n  select_module:\n    "x": [0]\n\n# about b\nb: 2\nswap:\n  enable: False\n';
  const before = cfgWith((c) => { c.recompute.mode = 'select'; c.recompute.select = [{ pattern: 'x', ranges: [[0, 0]] }]; });
  const after = cfgWith((c) => { c.recompute.mode = 'select'; c.recompute.select = [{ pattern: 'x', ranges: [[0, 3]] }]; });
  eq(editConfigText(training, before, after),
    'a: 1\nrecompute:\n  mode: select # why\n  select_module:\n    "x": [0-3]\n\n# about b\nb: 2\nswap:\n  enable: False\n',
    'a whole training YAML keeps its other keys and comments when a control edits one entry');
}

// comments between the entries of a list a control rewrites stay (they are the user's)
{
  const text = [
    'recompute:',
    '  mode: select # selective recomputation',
    '  select_module:',
    '    # attention first: it holds the most',
    '    "layers.*.self_attention.*": [0-15]  # all 16 layers',
    '    # the MLP of the first ten',
    '    "layers.*.mlp.*": [0-9]',
    '    # end of select_module',
    'swap:',
    '  enable: True',
    '  layer_swap:',
    '    # the embedding side',
    '    - layers: [16-17]  # two layers',
    '    # the output side',
    '    - layers:',
    '        - 20-21',
    '  op_swap:',
    '    # fc1 of the late layers',
    "    - op_name: '.*linear_fc1'  # the wide one",
    '      # which layers',
    '      layers: [22-23]',
    '    # fc2',
    "    - op_name: '.*linear_fc2'",
    '      layers: [24]',
    '',
  ].join('\n');
  const base = (c) => {
    c.recompute.mode = 'select';
    c.recompute.select = [{ pattern: 'layers.*.self_attention.*', ranges: [[0, 15]] }, { pattern: 'layers.*.mlp.*', ranges: [[0, 9]] }];
    c.swap.enable = true;
    c.swap.layerSwap = [{ ranges: [[16, 17]] }, { ranges: [[20, 21]] }];
    c.swap.opSwap = [{ pattern: '.*linear_fc1', ranges: [[22, 23]] }, { pattern: '.*linear_fc2', ranges: [[24, 24]] }];
  };
  const before = cfgWith(base);
  const edit = (f) => editConfigText(text, before, cfgWith((c) => { base(c); f(c); }));
  eq(edit((c) => { c.recompute.select[1].ranges = [[0, 10]]; }),
    text.replace('"layers.*.mlp.*": [0-9]', '"layers.*.mlp.*": [0-10]'),
    'a select_module entry\'s slider rewrites its value only, every comment between the entries stays');
  eq(edit((c) => { c.recompute.select[0].ranges = [[0, 14]]; }),
    text.replace('[0-15]  # all 16 layers', '[0-14]  # all 16 layers'),
    'the comment at the end of the entry stays');
  eq(edit((c) => { c.swap.layerSwap[0].ranges = [[16, 18]]; }),
    text.replace('- layers: [16-17]  # two layers', '- layers: [16-18]  # two layers'),
    'a layer_swap entry\'s slider rewrites its layers only');
  eq(edit((c) => { c.swap.layerSwap[1].ranges = [[20, 22]]; }),
    text.replace('    - layers:\n        - 20-21\n', '    - layers: [20-22]\n'),
    'a block list of layers becomes one flow list; the comments around the entry stay');
  eq(edit((c) => { c.swap.opSwap[0].ranges = [[22, 24]]; }),
    text.replace('      layers: [22-23]', '      layers: [22-24]'),
    'an op_swap entry\'s layers: the comments inside the entry stay');
  eq(edit((c) => { c.swap.opSwap[0].pattern = '.*linear_fc1.*'; }),
    text.replace("- op_name: '.*linear_fc1'  # the wide one", "- op_name: '.*linear_fc1.*'  # the wide one"),
    'an op_name edit rewrites the op_name only');
  eq(edit((c) => { c.recompute.select[0].pattern = '.*self_attention'; }),
    text.replace('"layers.*.self_attention.*": [0-15]  # all 16 layers', "'.*self_attention': [0-15]  # all 16 layers"),
    'a renamed pattern rewrites its entry line, keeping its comment');
  eq(edit((c) => { c.swap.layerSwap.splice(0, 1); }),
    text.replace('    - layers: [16-17]  # two layers\n', ''),
    'deleting an entry removes its lines only');
  eq(edit((c) => { c.recompute.select.push({ pattern: '.*input_layernorm', ranges: [[16, 17]] }); }),
    text.replace('    "layers.*.mlp.*": [0-9]\n', '    "layers.*.mlp.*": [0-9]\n    \'.*input_layernorm\': [16-17]\n'),
    'a new entry goes after the last, before the comment that ends the list');
}

// ---- diags.js: where a finding goes (the codes no page request produces) --------------

{
  const where = (d, text = '') => {
    const e = analyze({ errors: [d], warnings: [] }, text).entryOf.get(d);
    return { targets: e.targets.map(targetKey), field: e.field, reason: e.reason };
  };
  eq(where({ code: 'model-needed', file: 'config', path: 'recompute.full_recompute_layer', message: 'x' }),
    { targets: ['full'], field: null, reason: null }, 'model-needed names full_recompute_layer');
  eq(where({ code: 'internal', file: 'config', path: '', message: 'x' }).reason, 'an internal error of memopt: no setting causes it',
    'an internal error says why it has no control');
  const um = where({ code: 'unmodelled', file: 'model', path: 'context.mode', message: 'x' });
  eq([um.targets, um.field, /model file's context\.mode/.test(um.reason)], [[], null, true], 'a model-file warning without a field says why');
  eq(where({ code: 'parallel', file: 'model', path: 'training.micro_batch_num', message: 'x' }).field, 'micro_batch_num',
    'a model finding on a field of the page marks that field');
  const text = "recompute:\n  mode: select\n  select_module:\n    '.*mlp': [0-1]\n    '.*mlp': [2-3]\n";
  eq(pathAtLine(text, 5), ['recompute', 'select_module', '.*mlp'], 'the keys of a line');
  eq(where({ code: 'duplicate-key', file: 'config', path: '', line: 5, column: 5, message: 'x' }, text).targets, ['select:.*mlp'],
    'a duplicate pattern is marked on its entry');
  eq(where({ code: 'duplicate-key', file: 'config', path: '', line: 3, column: 1, message: 'x' }, 'swap:\n  enable: True\nswap:\n  enable: False\n').targets,
    ['section:swap'], 'a duplicate section is marked on the section');
  eq(where({ code: 'layer-range', file: 'config', path: 'swap.layer_swap[1].layers', message: "range '30-35' is, from layer 32 on, outside the model (layers 0-31)" }).targets,
    ['layerSwap:1'], 'a range past the model goes on its entry');
  const lr = analyze({ errors: [{ code: 'layer-range', file: 'config', path: 'recompute.full_recompute_layer', message: "layer '40' is outside the model (layers 0-31)" }] });
  eq([lr.byTarget.get('full')[0].itemText, lr.byLayer.size], ['40', 0], 'the range is found by its text; the model\'s layers in the message are not marked');
}

// ---- diff.js ---------------------------------------------------------------------------

eq(lineDiff('a\nb\nc\n', 'a\nx\nc\n'), [{ op: ' ', text: 'a' }, { op: '-', text: 'b' }, { op: '+', text: 'x' }, { op: ' ', text: 'c' }],
  'a changed line is one removal and one addition');
eq(lineDiff('a\n', 'a\n'), [{ op: ' ', text: 'a' }], 'equal texts');
eq(lineDiff('a\nb\n', 'b\n'), [{ op: '-', text: 'a' }, { op: ' ', text: 'b' }], 'a removed first line');

// ---- strip.js and controls.js ---------------------------------------------------------------

eq(addLayers([[0, 1], [8, 9]], 2, 5), [[0, 5], [8, 9]], 'adding merges touching ranges');
eq(addLayers([[4, 7]], 0, 0), [[0, 0], [4, 7]], 'adding keeps the list ascending');
eq(removeLayers([[0, 10]], 3, 5), [[0, 2], [6, 10]], 'removing splits a range');
eq(removeLayers([[0, 1], [4, 4]], 0, 4), [], 'removing everything');
eq(freeRange(cfgWith((c) => { c.recompute.full = [[0, 11]]; c.swap.layerSwap = [{ ranges: [[12, 12]] }]; }), 2, 31), [13, 14],
  'a new range starts after every named layer');
eq(freeRange(cfgWith((c) => { c.recompute.full = [[0, 31]]; }), 1, 31), [31, 31], 'when every layer is named: the last');

// ---- store.js: the history -------------------------------------------------------------------

store.model = { label: 'm', obj: { parallel: { tensor_parallel: 1 } } };
store.yaml = 'A';
resetHistory();
store.yaml = 'B';
record('b');
store.model.obj.parallel.tensor_parallel = 2;
record('tp');
eq(record('nothing'), false, 'an unchanged state is not a step');
eq(undo(), 'tp', 'undo names the step undone');
eq([store.yaml, store.model.obj.parallel.tensor_parallel], ['B', 1], 'undo restores the model');
eq(undo(), 'b', 'second undo');
eq(store.yaml, 'A', 'back at the start');
eq(undo(), null, 'nothing before the start');
eq(redo(), 'b', 'redo');
store.yaml = 'C';
record('c');
eq(historyState().canRedo, false, 'a new step drops the redo steps');

// api.js: how the page gives what a model-needed finding asks for, chosen by
// code and path (the core's texts name no face's flag)
eq(howToGive({ code: 'model-needed', path: 'parallel.world_size' }), 'set Devices (in Parallelism and batch)', 'the device count');
eq(howToGive({ code: 'model-needed', path: 'recompute.full_recompute_layer' }), 'pick a preset or upload a model file', 'the model');
eq(howToGive({ code: 'model-needed', path: 'model.model_config' }), 'pick a preset or upload a model file', 'a training YAML without a model');
eq(howToGive({ code: 'layer-order', path: 'parallel.world_size' }), null, 'another code');
// a model-needed problem answer: the core's detail, then the page's control, by type and path
eq(problemText({ status: 422, problem: { type: 'urn:memopt:problem:model-needed', detail: 'the device count is unknown', path: 'parallel.world_size', hint: 'give "devices" in the request' } }),
  'the device count is unknown: set Devices (in Parallelism and batch)', 'model-needed problem in the page\'s words');
eq(problemText({ status: 422, problem: { type: 'urn:memopt:problem:limit', detail: 'over the bound' } }), 'over the bound', 'other problems keep their detail');

// ledger.js: the curve thinning keeps the peak; sizes are checked before reading
const saw = Array.from({ length: 5000 }, (_, i) => [i, i % 7]);
saw[3210] = [3210, 99];
const thinned = thin(saw, 400);
eq(thinned.length <= 400, true, 'thin keeps at most max points');
eq(thinned.some((p) => p[0] === 3210 && p[1] === 99), true, 'thin keeps the peak');
eq(thinned.every((p, i) => i === 0 || p[0] > thinned[i - 1][0]), true, 'thin keeps time order');
eq(thin([[0, 1], [1, 2]], 400), [[0, 1], [1, 2]], 'short curves stay as they are');
eq(stepPath([[0, 1], [2, 3], [5, 0]], (x) => x * 10, (y) => 100 - y), 'M0.0,99.0H20.0V97.0H50.0V100.0', 'the step path holds each total until the next row');
eq(traceSizeProblem('a.csv', 1024 * 1024), null, 'a trace at the limit may be sent');
eq(/a\.csv is 1025 KiB: the server takes at most 1024 KiB/.test(traceSizeProblem('a.csv', 1024 * 1024 + 1)), true, 'over the limit by a byte');
eq(traceSizeProblem('e.csv', 0), 'e.csv is empty.', 'an empty trace');
// the model on show goes, as the estimate's does: a preset whose fields
// were edited is not the preset the server holds under its name
{
  const edited = { preset: 'llama2-7b', obj: { parallel: { tensor_parallel: 4 } } };
  eq(ledgerRequest('T', edited, 'Y', null), { trace: 'T', config: 'Y', model: '{"parallel":{"tensor_parallel":4}}' }, 'a preset edited on the page goes as the model on show, no stage');
  eq(calibrateRequest('L', edited, 'Y'), { runs: [{ model: '{"parallel":{"tensor_parallel":4}}', config: 'Y', log: 'L' }] }, 'the calibration sends the model on show');
  eq(requestModel(edited), ledgerRequest('T', edited, 'Y', null).model, 'one model part for every request');
  eq(requestModel({ preset: null, obj: null, needed: 'x' }), null, 'no model: none sent');
  eq('model' in ledgerRequest('T', { preset: null, obj: null }, 'Y', null), false, 'a trace alone, without a model');
}
eq(ledgerRequest('T', { preset: null, obj: { a: 1 } }, 'Y', 0), { trace: 'T', config: 'Y', model: '{"a":1}', stage: 0 }, 'an uploaded model goes as its JSON text, stage 0 kept');
// the estimated step on the trace's clock: its peak on the measured peak,
// or its start on the measured step's start when the trace marks steps
{
  const evs = [{ event: 'a', total_bytes: 5, start_seconds: 0, seconds: 0.5 },
    { event: 'b', total_bytes: 9, start_seconds: 0.5, seconds: 0.25 },
    { event: 'c', total_bytes: 7, start_seconds: 1, seconds: 2 }];
  const trace = { peak: { time_us: 10e6, step: 1 }, step_start: null, steps: [{ index: 1, start_us: 8e6 }] };
  eq(estimatedPlacement(trace, evs).offsetUs, 9.5e6, 'no step marker: the estimated peak (b, 0.5 s in) at the measured peak (10 s)');
  eq(estimatedPlacement({ ...trace, step_start: 'Empty' }, evs).offsetUs, 8e6, 'a step marker: the estimated step starts at the peak step\'s start');
  eq(estimatedPlacement(trace, [{ event: 'a', total_bytes: 5 }]), null, 'events without times: no placement');
  eq(estimatedPoints(evs, 1e6).pts, [[1e6, 5], [1.5e6, 9], [2e6, 7], [4e6, 7]], 'each event at its start, and the last event\'s end');
  eq(ticks(0, 118), [0, 20, 40, 60, 80, 100], 'ticks: round steps over the span');
  eq(ticks(-36.5, 3), [-30, -20, -10, 0], 'ticks: negative times too');
}

// fit.js: a fresh start plans no plan on the run on show: a whole training
// YAML keeps its other keys (its run) with the three sections emptied
{
  const file = '# mine\nparallel_config:\n  pipeline_stage: 2\nrecompute:\n  mode: full\n  full_recompute_layer: [0-3]\n';
  const cfg = { ...emptyConfig(), recompute: { mode: 'full', full: [[0, 3]], select: [], exclude: [] } };
  const st = { yaml: file, textIsYaml: true, cfgSynced: JSON.stringify(cfg) };
  eq(carriesRun(file), true, 'a training YAML carries a run');
  eq(carriesRun('recompute:\n  mode: full\nswap:\n  enable: False\n'), false, 'the three sections alone carry none');
  eq(freshConfig(st), '# mine\nparallel_config:\n  pipeline_stage: 2\nrecompute:\n  mode: None\n', 'the file with no plan');
  eq(freshConfig({ ...st, yaml: 'recompute:\n  mode: full\n  full_recompute_layer: [0-3]\n' }), 'recompute:\n  mode: None\n', 'the sections alone: no plan');
  eq(freshConfig({ ...st, textIsYaml: false }), 'recompute:\n  mode: None\n', 'a text that is not YAML: no plan');
}

// size.js: the request the panel sends, and the table's sort
{
  const m = { model: { num_layers: 2 } };
  eq(sizeRequest({ devices: '64', batch: '16', budget: '', top: '5' }, m).body,
    { model: m, devices: 64, global_batch: 16, top: 5 }, 'a device count goes as a number');
  eq(sizeRequest({ devices: '64-1024', batch: '16', budget: '40', top: '' }, m).body,
    { model: m, devices: '64-1024', global_batch: 16, top: 10, budget: 40 * 2 ** 30 }, 'a range as its text, a budget in bytes');
  eq(Boolean(sizeRequest({ devices: '0', batch: '16', budget: '', top: '' }, m).error), true, 'no device is an error');
  eq(Boolean(sizeRequest({ devices: '8', batch: '1.5', budget: '', top: '' }, m).error), true, 'a fractional batch is an error');
  const lay = (rank, peak) => ({ rank, peak_bytes: peak, parallel: {}, training: {} });
  const st = { layouts: [lay(1, 30), lay(2, 10), lay(3, 20)], sort: { key: 'peak', dir: 'ascending' } };
  eq(sortedRows(st).map((l) => l.rank), [2, 3, 1], 'sorted by peak, ascending');
  st.sort.dir = 'descending';
  eq(sortedRows(st).map((l) => l.rank), [1, 3, 2], 'and descending');
  const mf = (rank, mfu) => ({ rank, mfu, parallel: {}, training: {} });
  const sm = { layouts: [mf(1, 0.31), mf(2, 0.42), mf(3, 0.35)], sort: { key: 'mfu', dir: 'descending' } };
  eq(sortedRows(sm).map((l) => l.rank), [2, 3, 1], 'sorted by MFU, highest first');
  eq(mfuText(0.4234), '42.3%', 'MFU as a percentage');
  eq(mfuText(undefined), '-', 'no MFU in the answer');
  const pt = (rank, peak, step) => ({ rank, peak_bytes: peak, step_seconds: step, fits: true });
  const cp = chartPoints([pt(1, 10, 2), pt(2, 30, 1), pt(3, 20, 3)], 100, 50, 10);
  eq(cp.map((p) => [p.x, p.y]), [[10, 25], [90, 40], [50, 10]],
    'the least peak at the left edge, the most at the right; the slowest step at the top');
  eq(chartPoints([pt(1, 5, 1)], 100, 50, 10).map((p) => [p.x, p.y]), [[50, 25]], 'one layout in the middle');
  eq(chartPoints([], 100, 50, 10), [], 'no layout, no point');
}

console.log(failures ? `units: ${failures} of ${count} checks failed` : `units: ${count} checks passed`);
process.exit(failures ? 1 : 0);
