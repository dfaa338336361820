#!/usr/bin/env python3
"""The step-time table: each Megatron-LM CI run kept in tests/data/megatron/steptime
(measured.tsv: the median iteration-time of its logged steps after warm-up) beside
memopt's estimate of the same run (memopt estimate --json -m <case>.<device>.yaml).

usage: tools/steptime_table.py [MEMOPT] [--markdown]
"""
import csv, json, os, statistics, subprocess, sys

HERE = os.path.dirname(os.path.abspath(__file__))
DATA = os.path.join(HERE, '..', 'tests', 'data', 'megatron', 'steptime')
TERMS = ['compute', 'comm_tp', 'comm_cp', 'comm_ep', 'comm_pp', 'comm_dp', 'bubble',
         'optimizer', 'recompute', 'swap', 'fixed']


def estimate(memopt, case, device):
    model = os.path.join(DATA, f'{case}.{device}.yaml')
    cfg = os.path.join(DATA, f'{case}.config.yaml')
    if not os.path.exists(cfg):
        cfg = os.path.join(DATA, 'none.config.yaml')
    args = [memopt, 'estimate', '--json', '-m', model, cfg]
    out = subprocess.run(args, capture_output=True, text=True)
    if out.returncode not in (0, 1):
        raise SystemExit(f'{case}: {out.stderr.strip()}')
    answer = json.loads(out.stdout)
    if 'time' not in answer:
        raise SystemExit(f'{case}: {out.stdout[:400]}')
    return answer['time']


def main():
    memopt = next((a for a in sys.argv[1:] if not a.startswith('--')),
                  os.path.join(HERE, '..', 'build', 'memopt'))
    rows = list(csv.DictReader(open(os.path.join(DATA, 'measured.tsv')), delimiter='\t'))
    errs = []
    print('| run | device | measured s | estimated s | error | largest term | MFU |')
    print('|---|---|---:|---:|---:|---|---:|')
    for r in rows:
        t = estimate(memopt, r['case'], r['device'])
        meas = float(r['median_s'])
        err = (t['step_seconds'] - meas) / meas * 100
        errs.append(abs(err))
        big = max(TERMS, key=lambda k: t[k + '_seconds'])
        print(f"| {r['case']} | {r['device']} | {meas:.4f} | {t['step_seconds']:.4f} | "
              f"{err:+.1f}% | {big} {t[big + '_seconds']:.4f} | {t['mfu'] * 100:.1f}% |")
    print(f'\n{len(errs)} runs: median |error| {statistics.median(errs):.1f}%, '
          f'largest {max(errs):.1f}%, within 15%: {sum(e <= 15 for e in errs)}')
    mfu_table(memopt)
    ascend_table(memopt)


def mfu_table(memopt):
    """The Megatron-LM README's H100 table (mfu_table.tsv) beside the estimate."""
    rows = list(csv.DictReader(open(os.path.join(DATA, 'mfu_table.tsv')), delimiter='\t'))
    print('\n| model | TP | PP | GPUs | published MFU | estimated MFU | error | largest term |')
    print('|---|---:|---:|---:|---:|---:|---:|---|')
    errs = []
    for r in rows:
        name = 'mfu_' + r['model'].lower().replace('.', '_')
        out = subprocess.run([memopt, 'estimate', '--json', '-m',
                              os.path.join(DATA, name + '.yaml'),
                              os.path.join(DATA, 'none.config.yaml')],
                             capture_output=True, text=True)
        t = json.loads(out.stdout)['time']
        pub = float(r['mfu'])
        err = (t['mfu'] - pub) / pub * 100
        errs.append(abs(err))
        big = max(TERMS, key=lambda k: t[k + '_seconds'])
        print(f"| {r['model']} | {r['tp']} | {r['pp']} | {r['gpus']} | {pub * 100:.0f}% | "
              f"{t['mfu'] * 100:.1f}% | {err:+.1f}% | {big} |")
    print(f'\n{len(errs)} rows: median |error| {statistics.median(errs):.1f}%, '
          f'largest {max(errs):.1f}%, within 10%: {sum(e <= 10 for e in errs)}')


def ascend_table(memopt):
    """MindFormers' published tokens/s/p on Ascend (tests/data/mindformers-steptime) beside the
    estimate of the configuration it names (the training YAML as model and config)."""
    root = os.path.join(HERE, '..', 'tests', 'data')
    rows = list(csv.DictReader(open(os.path.join(root, 'mindformers-steptime', 'published.tsv')),
                               delimiter='\t'))
    print('\n| config | published tokens/s/p | estimated | error | largest term |')
    print('|---|---:|---:|---:|---|')
    for r in rows:
        path = os.path.join(root, 'mindformers', 'r1.3.0', r['config'] + '.yaml')
        out = subprocess.run([memopt, 'estimate', '--json', path], capture_output=True, text=True)
        t = json.loads(out.stdout)['time']
        pub = float(r['tokens_per_second_per_device'])
        est = t['tokens_per_second_per_device']
        big = max(TERMS, key=lambda k: t[k + '_seconds'])
        print(f"| {r['config']} | {pub:.0f} | {est:.0f} | {(est - pub) / pub * 100:+.1f}% | {big} |")


if __name__ == '__main__':
    main()
