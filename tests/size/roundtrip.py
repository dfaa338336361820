#!/usr/bin/env python3
"""`memopt size` answers checked through the CLI, every returned layout:

 - presets (dense, MoE): `memopt estimate --model <layout's model> <layout's
   config>` gives the layout's peak, byte for byte;
 - a MindSpore Transformers training YAML given as BASE (graph mode dense,
   graph mode MoE, PyNative MoE; files from tests/data, sources in their
   SOURCES files): each layout's config is that file with only the layout's
   keys and the memory sections changed (every other line identical: the
   diff's changed lines are all layout keys or section lines), it validates
   with no error and estimates by itself to the layout's peak;
 - a Megatron-LM CI run: the run's own arguments with the layout's
   `megatron_args` in place of its layout flags, read back by `memopt
   import`, estimate to the layout's peak: with the config the import says
   its recompute flags mean when the arguments carry them (a budget that
   needs recompute), else with the layout's config.

Usage: roundtrip.py MEMOPT. Exit 1 on any failure."""
import difflib
import json
import os
import re
import subprocess
import sys
import tempfile

MEMOPT = sys.argv[1]
TMP = tempfile.mkdtemp()
fails = 0
checked = 0

# The keys a layout sets in a base file (size_base.c), and the memory
# sections; a changed line must be one of them or inside a section.
LAYOUT_KEYS = {
    "data_parallel", "model_parallel", "pipeline_stage", "micro_batch_num",
    "context_parallel", "expert_parallel", "use_seq_parallel", "batch_size",
    "gradient_accumulation_steps", "enable_parallel_optimizer", "offset",
    "pp_interleave_num", "pipeline_interleave", "tensor_parallel",
    "pipeline_parallel", "pipeline_parallel_interleave_num",
    "pipeline_parallel_layers_per_stage", "data_parallel_shard",
    "local_batch_size", "micro_batch_size", "global_batch_size", "pipeline_config",
}
SECTIONS = ("recompute", "recompute_comm", "swap", "recompute_config")

# Megatron-LM flags a layout gives (size.c size_megatron_args) and the
# recompute flags: the run's own are dropped before the layout's are added.
MEGATRON_LAYOUT_FLAGS = {
    "--tensor-model-parallel-size", "--pipeline-model-parallel-size",
    "--num-layers-per-virtual-pipeline-stage", "--num-virtual-stages-per-pipeline-rank",
    "--virtual-pipeline-model-parallel-size", "--context-parallel-size",
    "--expert-model-parallel-size", "--expert-tensor-parallel-size",
    "--sequence-parallel", "--use-distributed-optimizer", "--micro-batch-size",
    "--global-batch-size", "--recompute-granularity", "--recompute-method",
    "--recompute-num-layers", "--recompute-modules",
    "--account-for-embedding-in-pipeline-split", "--account-for-loss-in-pipeline-split",
    "--decoder-first-pipeline-num-layers", "--decoder-last-pipeline-num-layers",
}


def fail(msg):
    global fails
    fails += 1
    print("FAIL " + msg)


def run(args, want_json=True):
    p = subprocess.run([MEMOPT] + args, capture_output=True, text=True)
    if want_json:
        try:
            return p.returncode, json.loads(p.stdout)
        except ValueError:
            return p.returncode, {"_stderr": p.stderr, "_stdout": p.stdout[:400]}
    return p.returncode, p.stdout + p.stderr


def write(name, text):
    path = os.path.join(TMP, name)
    with open(path, "w") as f:
        f.write(text)
    return path


def size(args):
    rc, out = run(["size", "--json"] + args)
    if "layouts" not in out or not out["layouts"]:
        fail("size %s: no layouts (rc %d): %s" % (" ".join(args), rc, out))
        return []
    return out["layouts"]


def estimate_peak(args):
    rc, out = run(["estimate", "--json"] + args)
    if rc != 0 or "peak_bytes" not in out:
        return None, out
    return out["peak_bytes"], out


def layout_name(l):
    p, t = l["parallel"], l["training"]
    return "TP%d PP%d VPP%d CP%d EP%d DP%d B%d M%d" % (
        p["tensor_parallel"], p["pipeline_parallel"], p["virtual_pipeline"],
        p["context_parallel"], p["expert_parallel"], p["data_parallel"],
        t["micro_batch_size"], t["micro_batch_num"])


def check_peak(what, l, args):
    global checked
    peak, out = estimate_peak(args)
    checked += 1
    if peak != l["peak_bytes"]:
        fail("%s %s: estimate says %s, size said %d (%s)" % (
            what, layout_name(l), peak, l["peak_bytes"], str(out)[:300]))


# ---- presets: model + config --------------------------------------------

def preset_case(preset, devices, batch, top):
    for i, l in enumerate(size(["--model", preset, "--devices", str(devices),
                                "--global-batch", str(batch), "--top", str(top)])):
        m = write("%s_%d.model.yaml" % (preset, i), l["model"])
        c = write("%s_%d.config.yaml" % (preset, i), l["config"])
        check_peak(preset, l, ["--model", m, c])


# ---- a training YAML as the base ----------------------------------------

def key_of(line):
    m = re.match(r"\s*-?\s*([A-Za-z_][A-Za-z0-9_]*)\s*:", line)
    return m.group(1) if m else None


def section_lines(text):
    """Line numbers (0-based) inside a top-level memory section."""
    inside, out = False, set()
    for i, line in enumerate(text.splitlines()):
        if line and not line[0].isspace() and not line.startswith("#"):
            inside = key_of(line) in SECTIONS
        if inside:
            out.add(i)
    return out


def check_bytes_kept(what, base, new):
    """Every changed line a layout key or a memory-section line."""
    a, b = base.splitlines(), new.splitlines()
    sa, sb = section_lines(base), section_lines(new)
    sm = difflib.SequenceMatcher(None, a, b, autojunk=False)
    for op, i1, i2, j1, j2 in sm.get_opcodes():
        if op == "equal":
            continue
        for i in range(i1, i2):
            if i not in sa and key_of(a[i]) not in LAYOUT_KEYS:
                return fail("%s: base line %d changed: %r" % (what, i + 1, a[i]))
        for j in range(j1, j2):
            if j not in sb and key_of(b[j]) not in LAYOUT_KEYS:
                return fail("%s: new line %d is not a layout key: %r" % (what, j + 1, b[j]))
    if not base.endswith("\n") == new.endswith("\n"):
        fail("%s: the final line break changed" % what)


def base_case(path, devices, batch, top, needs_devices):
    with open(path) as f:
        base = f.read()
    layouts = size(["--devices", str(devices), "--global-batch", str(batch),
                    "--top", str(top), path])
    dev = ["--devices", str(devices)] if needs_devices else []
    for i, l in enumerate(layouts):
        what = "%s #%d" % (os.path.basename(path), i + 1)
        check_bytes_kept(what, base, l["config"])
        c = write("base_%d.yaml" % i, l["config"])
        rc, out = run(["validate", "--json"] + dev + [c])
        if out.get("valid") is not True:
            fail("%s: does not validate: %s" % (what, str(out.get("errors", out))[:300]))
        check_peak(what, l, dev + [c])


# ---- Megatron-LM arguments ----------------------------------------------

def megatron_run_args(model_config):
    """The run's MODEL_ARGS as an argument line, its layout flags left out."""
    import yaml
    with open(model_config) as f:
        args = yaml.safe_load(f)["MODEL_ARGS"]
    words = []
    for k, v in args.items():
        if k in MEGATRON_LAYOUT_FLAGS:
            continue
        if v is True:
            words.append(k)
        elif v is not False and v is not None:
            words += [k, str(v)]
    return words


HINT = "the config that does the same: "


def megatron_recompute_config(warnings):
    """The config the import says the arguments' recompute flags mean."""
    for w in warnings:
        if w.get("code") == "megatron-recompute" and HINT in w.get("hint", ""):
            return w["hint"].split(HINT, 1)[1] + "\n"
    return None


def megatron_case(model_config, devices, batch, top, budget=None, accounted=0,
                  pick="--account-for-", vpp=False):
    """accounted: check only that many of the layouts whose Megatron-LM
    arguments hold pick (by default the splits that count the embedding or
    the loss as layers, --account-for-*), out of all; vpp: only those with
    virtual chunks"""
    global checked
    base_words = megatron_run_args(model_config)
    extra = ["--budget", budget] if budget else []
    flagged = 0
    layouts = size(["--model", model_config, "--devices", str(devices),
                    "--global-batch", str(batch), "--top", "all" if accounted else str(top)] + extra)
    if accounted:
        layouts = [l for l in layouts if pick in l.get("megatron_args", "") and
                   (not vpp or "--num-virtual-stages-per-pipeline-rank" in l["megatron_args"])]
        if len(layouts) < accounted:
            fail("%s: %d layouts with %s, %d wanted" % (
                model_config, len(layouts), pick, accounted))
        layouts = layouts[:accounted]
    for i, l in enumerate(layouts):
        what = "%s #%d" % (os.path.basename(model_config), i + 1)
        if not l.get("megatron_args"):
            fail("%s: no megatron_args" % what)
            continue
        line = "torchrun --nproc_per_node %d pretrain_gpt.py %s %s\n" % (
            devices, " ".join(base_words), l["megatron_args"])
        a = write("megatron_%d.sh" % i, line)
        rc, out = run(["import", "--json", "--devices", str(devices), a])
        if rc != 0 or not out.get("valid"):
            fail("%s: import failed (%d): %s" % (what, rc, str(out)[:300]))
            continue
        m = write("megatron_%d.model.yaml" % i, out["yaml"])
        conf = l["config"]
        if "--recompute-granularity" in l["megatron_args"]:
            flagged += 1
            conf = megatron_recompute_config(out.get("warnings", []))
            if conf is None:
                fail("%s: the import says no config for the recompute flags" % what)
                continue
        elif l["plan"] != "none" and not l.get("megatron_plan_note"):
            fail("%s: a plan (%s) with neither recompute flags nor a note" % (what, l["plan"]))
        c = write("megatron_%d.config.yaml" % i, conf)
        check_peak(what, l, ["--model", m, c])
    return flagged


def main():
    if not os.access(MEMOPT, os.X_OK):
        print("FAIL: %s not built" % MEMOPT)
        return 1
    try:
        import yaml  # noqa: F401  (the Megatron-LM case reads model_config.yaml)
    except ImportError:
        print("skipped: no yaml module")
        return 0
    preset_case("llama3-70b", 64, 128, 8)             # dense
    preset_case("mixtral-8x7b", 16, 64, 8)            # MoE
    mf = "tests/data/mindformers/master/"
    base_case(mf + "pretrain_qwen3_32b_4k.yaml", 16, 64, 6, False)     # graph, dense
    # the first 80 on 16 devices: virtual chunks (pp_interleave_num, pipeline_interleave
    # added) and uneven splits (offset added) among them
    base_case(mf + "finetune_llama3_1_8b.yaml", 16, 64, 80, False)     # graph, dense
    base_case(mf + "pretrain_qwen3_30b_a3b_4k.yaml", 16, 64, 6, False)  # graph, MoE
    base_case("tests/data/real-configs/pynative_ds3.yaml", 16, 32, 6, True)  # PyNative, MoE
    mg = "tests/data/megatron/"
    megatron_case(mg + "gpt3_mcore_te_tp2_pp2_cp2.model_config.yaml", 8, 32, 6)
    megatron_case(mg + "gpt3_mcore_te_tp2_pp2_ep4_etp1_memory_speed.model_config.yaml",
                  8, 32, 6)
    # the embedding and the loss counted as layers (6 layers, 8 chunks): the
    # import reads --account-for-* and --num-virtual-stages-per-pipeline-rank back;
    # under a budget that needs plans, block flags over chunks of unequal length
    megatron_case(mg + "gpt3_mcore_te_tp1_pp4_vp2_account_for_embedding_loss_in_pipeline_split"
                  ".model_config.yaml", 8, 32, 0, budget="3GiB", accounted=12)
    # uneven splits (--decoder-first/last-pipeline-num-layers, PP 4 not dividing the
    # 6 layers): the import reads the flags back as the same per-stage lists; under a
    # budget that needs plans, block flags over stages of unequal length
    megatron_case(mg + "gpt3_mcore_te_tp1_pp4_vp2_account_for_embedding_loss_in_pipeline_split"
                  ".model_config.yaml", 8, 32, 0, budget="3GiB", accounted=12,
                  pick="--decoder-")
    # with virtual chunks (32 layers over PP 3, 6 or 12 on 12 devices): each stage's
    # layers split over its VPP chunks, chunks in virtual order
    megatron_case(mg + "gpt3_7b_tp1_pp4_memory_speed.model_config.yaml", 12, 24, 0,
                  accounted=8, pick="--decoder-", vpp=True)
    # a budget that needs recompute: the layouts carry Megatron-LM's block flags
    flagged = megatron_case(mg + "gpt3_7b_tp1_pp4_memory_speed.model_config.yaml", 8, 8, 12,
                            budget="20GiB")
    if flagged < 3:
        fail("gpt3_7b under 20 GiB: %d layouts with recompute flags, 3 or more expected"
             % flagged)
    print("%d layouts re-estimated, %d failures" % (checked, fails))
    return 1 if fails or checked == 0 else 0


if __name__ == "__main__":
    sys.exit(main())
