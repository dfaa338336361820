#!/usr/bin/python3
"""Builds the seed corpora of the fuzz harnesses from real files kept under
tests/ (MindSpore Transformers configs in tests/data/mindformers, with their
source URL and commit in tests/data/mindformers/SOURCES.tsv; the API
fixtures). Run from the repository root; it rewrites
tests/fuzz/corpus/{estimate,plan,model,api_request}. libFuzzer adds what it
finds beside these when run by tests/fuzz/run-libfuzzer.sh."""
import json
import os
import shutil

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
MF = os.path.join(ROOT, "tests", "data", "mindformers")
FIX = os.path.join(ROOT, "tests", "api", "fixtures")
MEGATRON = os.path.join(ROOT, "tests", "data", "megatron")

# Megatron-LM arguments: a launch line and hostile texts (the importer's
# errors: a number past int64, a missing value, an unterminated quote, a
# shell variable, a mapping as a value, a redirection after the arguments).
MEGATRON_SEEDS = {
    "launch-line.sh": "#!/bin/bash\nCUDA_DEVICE_MAX_CONNECTIONS=1 torchrun --nproc_per_node 8 "
                      "--nnodes=2 \\\n  pretrain_gpt.py --num-layers 32 --hidden-size 4096 "
                      "--num-attention-heads 32 --group-query-attention --num-query-groups 8 "
                      "--seq-length 8192 --max-position-embeddings 8192 --swiglu "
                      "--micro-batch-size 1 --global-batch-size 128 --bf16 "
                      "--tensor-model-parallel-size 4 --pipeline-model-parallel-size 2 "
                      "--recompute-granularity full --recompute-method block "
                      "--recompute-num-layers 4 --data-path '/data/my corpus' 2>&1 | tee log\n",
    "hostile-int64.txt": "--num-layers 99999999999999999999999 --hidden-size 8\n",
    "hostile-missing-value.txt": "--num-layers --hidden-size\n",
    "hostile-quote.txt": "--num-layers 2 --hidden-size 8\n--data-path 'open\n",
    "hostile-variable.txt": "--num-layers $L --hidden-size ${H} --moe-layer-freq ([0]*9+[1]*-2)\n",
    "hostile-map.yaml": "MODEL_ARGS:\n  --num-layers: {a: 1}\n  --hidden-size: [1, 2]\n"
                        "  --num-layers-per-virtual-pipeline-stage: 0\n",
    # training scripts (bash arrays, ${NAME[@]}): the doubling array and the
    # nested defaults the reader must refuse, and its expansion forms
    "hostile-script-doubling.sh": "A=( --num-layers 2 )\n" + "A=( ${A[@]} ${A[@]} )\n" * 20
                                  + "torchrun x.py ${A[@]}\n",
    "hostile-script-nested.sh": "B=" + "${X:-" * 12 + "1" + "}" * 12
                                + "\nA=( --num-layers $B --hidden-size 8 )\ntorchrun x.py ${A[@]}\n",
    "script-forms.sh": "L=${LAYERS:-4}\nCKPT=$1\nNOW=$(date +%s)\n"
                       "M=( --num-layers $L --hidden-size ${L} \"--num-attention-heads 2\" )\n"
                       "D=( --save $CKPT --load $NOW )\nM+=( --seq-length 8 )\n"
                       "if [ -n \"$X\" ]; then\n  M+=( --bf16 )\nfi\nexport NODES=2\n"
                       "torchrun --nproc_per_node 4 --nnodes $NODES train.py ${M[@]} \"${D[@]}\"\n",
}
OUT = os.path.join(ROOT, "tests", "fuzz", "corpus")

# Dense and MoE, PyNative and graph mode, pipelines, MTP, swap: one each.
CONFIGS = [
    "master/finetune_qwen2_5_0_5b_8k.yaml",
    "master/pretrain_qwen3_30b_a3b_4k.yaml",
    "master/llm_pretrain_moe_template.yaml",
    "master/finetune_telechat_39b_a12b.yaml",
    "r1.3.0/pretrain_llama2_7b.yaml",
    "r1.3.0/finetune_deepseek2_236B.yaml",
    "r1.5.0/pretrain_deepseek3_671b.yaml",
    "r1.7.0/pretrain_mixtral-8x7b.yaml",
]


def read(path):
    with open(path, "rb") as f:
        return f.read()


def found_by_fuzzer(name):
    """Inputs a libFuzzer run found (lf-<sha1>, or <prefix>-lf-<what>) are
    kept as regression inputs: they are not generated here."""
    return name.startswith("lf-") or "-lf-" in name


def fresh(name):
    """The target's corpus folder with every generated seed removed (what
    main() writes again), the fuzzer's finds kept."""
    d = os.path.join(OUT, name)
    os.makedirs(d, exist_ok=True)
    for entry in os.listdir(d):
        if not found_by_fuzzer(entry):
            os.remove(os.path.join(d, entry))
    return d


def stem(rel):
    return rel.replace("/", "-").rsplit(".", 1)[0]


def main():
    d = fresh("estimate")
    for rel in CONFIGS:
        shutil.copy(os.path.join(MF, rel), os.path.join(d, stem(rel) + ".yaml"))
    shutil.copy(os.path.join(FIX, "training.yaml"), os.path.join(d, "api-fixture-training.yaml"))

    # plan: a selector byte (allow bits 0-5, staged 6, 16 GiB budget 7)
    d = fresh("plan")
    for i, (rel, sel) in enumerate(zip(CONFIGS, (0x00, 0x40, 0x80, 0xC1, 0x12, 0x3F, 0x04, 0xE0))):
        with open(os.path.join(d, "%02x-%s.bin" % (sel, stem(rel))), "wb") as f:
            f.write(bytes([sel]) + read(os.path.join(MF, rel)))

    d = fresh("model")
    for rel in CONFIGS:
        shutil.copy(os.path.join(MF, rel), os.path.join(d, stem(rel) + ".yaml"))
    shutil.copy(os.path.join(FIX, "hf-config.json"), os.path.join(d, "api-fixture-hf-config.json"))
    shutil.copy(os.path.join(FIX, "training.yaml"), os.path.join(d, "api-fixture-training.yaml"))
    for name in sorted(os.listdir(MEGATRON)):
        if name.endswith(".model_config.yaml"):
            shutil.copy(os.path.join(MEGATRON, name), os.path.join(d, "megatron-" + name))
    # one model file with every Megatron key memopt reads
    shutil.copy(os.path.join(MEGATRON, "gpt3_7b_tp4_pp1_memory_speed.yaml"),
                os.path.join(d, "megatron-gpt3_7b_tp4_pp1_memory_speed.yaml"))
    for name in sorted(os.listdir(os.path.join(MEGATRON, "scripts"))):
        shutil.copy(os.path.join(MEGATRON, "scripts", name), os.path.join(d, "megatron-script-" + name))
    for name, text in MEGATRON_SEEDS.items():
        with open(os.path.join(d, "megatron-" + name), "w") as f:
            f.write(text)

    # api_request: byte 0 = route (bits 0-2: validate, expand, export,
    # estimate, plan, layout, models/import, ledger) and YAML body (bit 3)
    d = fresh("api_request")
    training = read(os.path.join(FIX, "training.yaml")).decode()
    hf = json.loads(read(os.path.join(FIX, "hf-config.json")))
    bodies = [
        (0, {"config": training}),
        (1, {"config": training, "all_paths": True}),
        (2, {"config": training}),
        (3, {"config": training, "devices": 8}),
        (4, {"config": training, "budget": "24GiB", "allow": ["select", "full"]}),
        (5, {"config": training, "model": "mixtral-8x7b"}),
        (6, {"config": "", "model": hf}),
        (0, {"config": "recompute:\n  mode: full\n  full_recompute_layer: [0-3]\n",
             "model": "qwen3-30b-a3b", "devices": 64}),
        (7, {"trace": read(os.path.join(ROOT, "tests", "fuzz", "corpus", "ledger",
                                         "seed-pp2.csv")).decode()}),
    ]
    for i, (route, body) in enumerate(bodies):
        with open(os.path.join(d, "json-%d-route%d.bin" % (i, route)), "wb") as f:
            f.write(bytes([route]) + json.dumps(body).encode())
    for i, rel in enumerate(CONFIGS[:4]):
        route = 8 | (0, 3, 5, 1)[i]
        with open(os.path.join(d, "yaml-%d-%s.bin" % (route, stem(rel))), "wb") as f:
            f.write(bytes([route]) + read(os.path.join(MF, rel)))


if __name__ == "__main__":
    main()
