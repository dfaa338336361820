#!/bin/sh
# `memopt import` and `--model` on Megatron-LM's functional-test
# model_config.yaml files (tests/data/megatron, sources in SOURCES.md): the
# model file printed reads with PyYAML to the hand-made model file of the
# same case key for key (each written from reading the model_config.yaml),
# reads back through `memopt import`, and `memopt estimate --model` takes
# the model_config.yaml itself (the MoE memory case: or the EP rule's
# refusal at its flag, see below). Hostile input
# exits 1 with FILE:LINE:COL, an unreadable file 2.
set -u
cd "$(dirname "$0")/../.."
MEMOPT=${MEMOPT:-$(pwd)/build/memopt}
PY=/usr/bin/python3
if [ ! -x "$MEMOPT" ]; then echo "FAIL: $MEMOPT not built"; exit 1; fi
if ! "$PY" -c 'import yaml' 2>/dev/null; then echo "skipped: $PY has no yaml module"; exit 0; fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0
ok() { echo "ok   $1"; }
bad() { echo "FAIL $1"; fails=$((fails + 1)); }
D=tests/data/megatron
echo 'recompute: {mode: None}' > "$tmp/none.yaml"

for c in gpt3_7b_tp1_pp4_memory_speed gpt3_mcore_te_tp2_pp2_ep4_etp1_memory_speed \
	gpt3_mcore_te_tp1_pp1_uniform_full_recompute gpt3_mcore_te_tp2_pp2_cp2 \
	gpt3_mcore_te_tp2_pp1_te_8experts2parallel_dist_optimizer; do
	if ! "$MEMOPT" import --devices 8 "$D/$c.model_config.yaml" > "$tmp/$c.yaml" 2> "$tmp/$c.err"; then
		bad "$c: import exit $?"; continue
	fi
	if "$PY" - "$D/$c.yaml" "$tmp/$c.yaml" <<'PYEOF'
import sys, yaml
hand = yaml.safe_load(open(sys.argv[1]))
mine = yaml.safe_load(open(sys.argv[2]))
for sect, keys in hand.items():
    if sect == "device":
        continue  # from the golden values' file name (dgx_h100), not the arguments
    for k, v in keys.items():
        got = mine.get(sect, {}).get(k)
        if got != v:
            sys.exit("%s.%s: hand-made %r, imported %r" % (sect, k, v, got))
PYEOF
	then ok "$c: the import is the hand-made model file (PyYAML)"; else bad "$c: differs"; fi
	"$MEMOPT" import "$tmp/$c.yaml" > /dev/null 2> "$tmp/$c.back"
	rc=$?
	# EP 4 over DP 2 x TP 2 (DDP, expert data parallel 1): memopt's EP rule
	# counted the shard degree (1), not Megatron's expert data parallel, until
	# branch megatron; either answer, nothing else
	ep_refused() { grep -q "error\[parallel\]: expert_parallel 4 does not divide" "$1" &&
		grep -q " 1 error," "$1"; }
	case $c in
	*ep4_etp1*) ok_rc() { [ $1 -eq 0 ] || { [ $1 -eq 1 ] && ep_refused "$2"; }; } ;;
	*) ok_rc() { [ $1 -eq 0 ]; } ;;
	esac
	if ok_rc $rc "$tmp/$c.back"; then ok "$c: the printed file reads back"
	else bad "$c: the printed file does not read back (rc $rc)"; fi
	"$MEMOPT" estimate --model "$D/$c.model_config.yaml" --devices 8 "$tmp/none.yaml" > "$tmp/$c.est" 2>&1
	rc=$?
	if [ $rc -eq 0 ] && grep -q "^estimate (pytorch rules): peak" "$tmp/$c.est"; then
		ok "$c: estimate --model model_config.yaml"
	elif ok_rc $rc "$tmp/$c.est" && grep -q "model_config.yaml:14:3: error\[parallel\]" "$tmp/$c.est"; then
		ok "$c: estimate --model refused by the EP rule at --expert-model-parallel-size (14:3)"
	else bad "$c: estimate rc $rc"; fi
done

# --json: the diagnostics and the YAML
if "$MEMOPT" import --json --devices 8 "$D/gpt3_mcore_te_tp1_pp1_uniform_full_recompute.model_config.yaml" |
	"$PY" -c 'import json, sys, yaml
j = json.load(sys.stdin)
assert j["valid"] is True, j
assert yaml.safe_load(j["yaml"])["model"]["num_layers"] == 12
w = [x for x in j["warnings"] if x["code"] == "megatron-recompute"]
assert w and w[0]["line"] == 42 and "[0-11]" in w[0]["hint"], w'; then
	ok "--json: valid, yaml, the recompute warning at 42 with its config"
else bad "--json"; fi

# --json when nothing is imported (the file does not parse): still an answer on stdout, exit 2
printf 'model: [\n' > "$tmp/broken.yaml"
"$MEMOPT" import --json "$tmp/broken.yaml" > "$tmp/broken.json" 2> /dev/null
rc=$?
if [ $rc -eq 2 ] && "$PY" -c 'import json, sys
j = json.load(open(sys.argv[1]))
assert j["valid"] is False, j
codes = [e["code"] for e in j["errors"]]
assert "yaml-syntax" in codes and codes[-1] == "invalid", codes' "$tmp/broken.json"; then
	ok "--json on a file that does not parse: valid false, the syntax error and the reason, exit 2"
else bad "--json on a file that does not parse (rc $rc)"; cat "$tmp/broken.json"; fi

# Megatron-LM's training scripts (tests/data/megatron/scripts): the GPT-3
# 175B one as shipped (one node of 8) is refused by the parallel rule at
# --nproc_per_node in DISTRIBUTED_ARGS (22:5); on 128 devices it imports;
# Mixtral's gives 8 devices (GPUS_PER_NODE=8 x ${SLURM_NNODES:-"1"}), DP 2
S=$D/scripts
"$MEMOPT" import "$S/train_gpt3_175b_distributed.sh" > /dev/null 2> "$tmp/gpt3.err"
rc=$?
if [ $rc -eq 1 ] && grep -q "train_gpt3_175b_distributed.sh:22:5: error\[parallel\]" "$tmp/gpt3.err"; then
	ok "gpt3 175B script on its one node: exit 1 at 22:5"
else bad "gpt3 175B script: rc $rc"; cat "$tmp/gpt3.err"; fi
if "$MEMOPT" import --devices 128 "$S/train_gpt3_175b_distributed.sh" 2> /dev/null |
	"$PY" -c 'import sys, yaml
m = yaml.safe_load(sys.stdin)
assert (m["model"]["num_layers"], m["model"]["hidden_size"], m["model"]["num_attention_heads"]) == (96, 12288, 96), m
assert (m["parallel"]["tensor_parallel"], m["parallel"]["pipeline_parallel"], m["parallel"]["data_parallel"]) == (8, 16, 1), m
assert m["training"]["compute_dtype"] == "float16", m'; then
	ok "gpt3 175B script on 128 devices: 96 x 12288, TP 8, PP 16, fp16"
else bad "gpt3 175B script on 128 devices"; fi
if "$MEMOPT" import "$S/train_mixtral_8x7b_distributed.sh" 2> "$tmp/mixtral.err" |
	"$PY" -c 'import sys, yaml
m = yaml.safe_load(sys.stdin)
p = m["parallel"]
assert (p["world_size"], p["pipeline_parallel"], p["expert_parallel"], p["data_parallel"]) == (8, 4, 8, 2), p
assert m["model"]["num_moe_experts"] == 8 and m["model"]["num_query_groups"] == 8, m' &&
	grep -q "train_mixtral_8x7b_distributed.sh:102:1: warning\[megatron-script\]" "$tmp/mixtral.err"; then
	ok "mixtral script: 8 devices, PP 4, EP 8, DP 2; its if block skipped (102:1)"
else bad "mixtral script"; cat "$tmp/mixtral.err"; fi

# the tokenizer a script names, opened from where the run is launched (the
# working directory): MindSpeed-LLM's Qwen-7B script with its tokenizer path
# filled in as a user does, the folder holding Qwen-7B's config.json
# (vocab_size 151936) and its tiktoken file, which memopt does not count:
# the vocabulary is config.json's rows, said so; launched elsewhere, the
# folder is not found, said so
Q=tests/corpus/files/mindspeed-script/v1.0.0/examples/legacy/qwen/pretrain_qwen_7b_ptd.sh
mkdir -p "$tmp/launch/model_from_hf/qwen-hf"
printf '{"architectures": ["QWenLMHeadModel"], "vocab_size": 151936}\n' \
	> "$tmp/launch/model_from_hf/qwen-hf/config.json"
: > "$tmp/launch/model_from_hf/qwen-hf/qwen.tiktoken"
sed 's#^TOKENIZER_MODEL=.*#TOKENIZER_MODEL="./model_from_hf/qwen-hf/"#' "$Q" > "$tmp/launch/qwen.sh"
if (cd "$tmp/launch" && "$MEMOPT" import qwen.sh 2> tok.err > tok.yaml) &&
	"$PY" -c 'import sys, yaml
m = yaml.safe_load(open(sys.argv[1]))
assert m["model"]["vocab_size"] == 151936, m["model"]' "$tmp/launch/tok.yaml" &&
	grep -q "vocab_size: the model's rows" "$tmp/launch/tok.err"; then
	ok "Qwen-7B script launched beside its tokenizer folder: vocabulary 151936 from its config.json"
else bad "Qwen-7B tokenizer folder"; cat "$tmp/launch/tok.err"; fi
if (cd "$tmp" && "$MEMOPT" import launch/qwen.sh 2> tok.err > /dev/null) &&
	grep -q "not read: no such file or folder where the run is launched" "$tmp/tok.err"; then
	ok "launched elsewhere: the tokenizer is not found, said"
else bad "tokenizer not found"; cat "$tmp/tok.err"; fi

# hostile: an unterminated quote (exit 1, at the quote), a number past
# int64 (exit 1, at the value), a missing file (exit 2)
printf -- '--num-layers 2 --hidden-size 8\n--data-path '"'"'open\n' > "$tmp/quote.txt"
"$MEMOPT" import "$tmp/quote.txt" > /dev/null 2> "$tmp/quote.err"
rc=$?
if [ $rc -eq 1 ] && grep -q "quote.txt:2:13: error\[megatron-syntax\]" "$tmp/quote.err"; then
	ok "unterminated quote: exit 1 at 2:13"
else bad "unterminated quote: rc $rc"; cat "$tmp/quote.err"; fi
printf -- '--num-layers 99999999999999999999 --hidden-size 8 --num-attention-heads 1\n' > "$tmp/big.txt"
"$MEMOPT" import "$tmp/big.txt" > /dev/null 2> "$tmp/big.err"
rc=$?
if [ $rc -eq 1 ] && grep -q "big.txt:1:14: error\[type\]" "$tmp/big.err"; then
	ok "a number past int64: exit 1 at 1:14"
else bad "a number past int64: rc $rc"; cat "$tmp/big.err"; fi
"$MEMOPT" import "$tmp/missing.txt" > /dev/null 2>&1
rc=$?
if [ $rc -eq 2 ]; then ok "unreadable file: exit 2"; else bad "unreadable file: rc $rc"; fi

# MindSpeed-LLM's FSDP2 launch (train_fsdp2.py), run from its checkout as a user runs
# it (the corpus keeps c77308a1's scripts and YAMLs at their paths under
# tests/corpus/files/mindspeed-script/c77308a14bfc): the script's torchrun counts
# (NPUS_PER_NODE=16, NNODES=1), its --parallel.fsdp_size 16 and
# --training.per_device_train_batch_size 1, its YAML's data.cutoff_len 4096; the model
# Qwen3-8B's config.json given with --model (36 layers). Without --model: exit 1, a
# model-needed error that says what of the run was read; from another directory the
# YAML is said not read, at its token (line 21, column 43).
MS=tests/corpus/files/mindspeed-script/c77308a14bfc
F=examples/fsdp2/qwen3/pretrain_qwen3_8b_4k_fsdp2_A3.sh
Q=$(pwd)/tests/corpus/files/hf-config/Qwen--Qwen3-8B/config.json
(cd "$MS" && "$MEMOPT" import --model "$Q" "$F") > "$tmp/fsdp2.yaml" 2> "$tmp/fsdp2.err"
rc=$?
if [ $rc -eq 0 ] && "$PY" - "$tmp/fsdp2.yaml" <<'PYEOF'
import sys, yaml
m = yaml.safe_load(open(sys.argv[1]))
want = {("parallel", "world_size"): 16, ("parallel", "data_parallel_shard"): 16,
        ("model", "seq_length"): 4096, ("training", "micro_batch_size"): 1,
        ("training", "micro_batch_num"): 1, ("model", "num_layers"): 36,
        ("training", "framework"): "pytorch", ("training", "params_dtype"): "float32",
        ("training", "compute_dtype"): "bfloat16"}
for (s, k), v in want.items():
    if m.get(s, {}).get(k) != v:
        sys.exit("%s.%s: %r, want %r" % (s, k, m.get(s, {}).get(k), v))
PYEOF
then ok "fsdp2 launch: the run over --model (16 devices, FSDP 16, cutoff_len 4096)"
else bad "fsdp2 launch: rc $rc"; cat "$tmp/fsdp2.err"; fi
(cd "$MS" && "$MEMOPT" import "$F") > /dev/null 2> "$tmp/fsdp2n.err"
rc=$?
if [ $rc -eq 1 ] && grep -q "error\[model-needed\]: .*the run read: 16 devices" "$tmp/fsdp2n.err"; then
	ok "fsdp2 launch without a model: model-needed with what was read"
else bad "fsdp2 launch without a model: rc $rc"; cat "$tmp/fsdp2n.err"; fi
"$MEMOPT" import --model "$Q" "$MS/$F" > /dev/null 2> "$tmp/fsdp2o.err"
if grep -q "$F:21:43: warning\[megatron-script\]: the run's YAML examples/fsdp2/qwen3/pretrain_qwen3_8b_4k_fsdp2_A3.yaml is not read" "$tmp/fsdp2o.err"; then
	ok "fsdp2 launch from elsewhere: the YAML not read, at its token"
else bad "fsdp2 launch from elsewhere"; cat "$tmp/fsdp2o.err"; fi

# The same launch as a user's checkout holds it, with the model where the script names it
# (c77308a1's Qwen3-30B-A3B script: --model.model_name_or_path ./model_weights/Qwen3-30B-A3B/,
# opened from the launch directory): `memopt import` reads that config.json (128 experts, its
# YAML's cutoff_len 4096), and `estimate --model SCRIPT` prices it.
ck="$tmp/checkout"
mkdir -p "$ck/examples/fsdp2" "$ck/model_weights/Qwen3-30B-A3B"
cp -r "$MS/examples/fsdp2/qwen3_moe" "$ck/examples/fsdp2/"
cp tests/corpus/files/hf-config/Qwen--Qwen3-30B-A3B/config.json "$ck/model_weights/Qwen3-30B-A3B/"
S=examples/fsdp2/qwen3_moe/pretrain_qwen3_30b_4k_fsdp2_A3.sh
(cd "$ck" && "$MEMOPT" import "$S") > "$tmp/ck.yaml" 2> "$tmp/ck.err"
rc=$?
if [ $rc -eq 0 ] && grep -q "^  num_moe_experts: 128" "$tmp/ck.yaml" && grep -q "^  seq_length: 4096" "$tmp/ck.yaml"; then
	ok "fsdp2 launch: model_name_or_path's config.json from the launch directory"
else bad "fsdp2 launch, model directory: rc $rc"; cat "$tmp/ck.err"; fi
(cd "$ck" && "$MEMOPT" estimate --model "$S" "$tmp/none.yaml") > "$tmp/ck.est" 2>&1
rc=$?
if [ $rc -le 1 ] && grep -q "^estimate (pytorch rules): peak" "$tmp/ck.est"; then
	ok "fsdp2 launch: estimate --model SCRIPT"
else bad "fsdp2 launch: estimate --model SCRIPT: rc $rc"; head -5 "$tmp/ck.est"; fi

if [ $fails -ne 0 ]; then echo "megatron import: $fails failed"; exit 1; fi
echo "megatron import: ok"
