#!/bin/sh
# Copies the corpus files out of local snapshots of their repositories (git
# directories, e.g. the ones the `fetch` tool brings) and writes
# SOURCES.tsv: local file, kind, version, repository, path, commit. Each
# distinct file (git blob) is kept once, under the first version listed
# that has it. Usage: tests/corpus/gather.sh MINDFORMERS_GIT MEGATRON_GIT MINDSPEED_GIT
# AICONFIGURATOR_GIT LLMSERVINGSIM_GIT LLMPROF_GIT (run from the repository root; it
# rewrites tests/corpus/files/).
set -eu
MF=$1 MG=$2 MS=$3 AIC=$4 SIM=$5 PROF=$6
OUT=tests/corpus
rm -rf "$OUT/files"
mkdir -p "$OUT/files"
printf 'file\tkind\tversion\trepo\tpath\tcommit\n' > "$OUT/SOURCES.tsv"
seen=$(mktemp)
trap 'rm -f "$seen"' EXIT

# keep GIT REPO KIND VERSION REF PATH...: every blob of the paths at REF
keep() {
	git=$1 repo=$2 kind=$3 version=$4 ref=$5
	shift 5
	commit=$(git -C "$git" rev-parse "$ref^{commit}")
	git -C "$git" ls-tree -r "$commit" -- "$@" | while read -r mode type blob path; do
		grep -qx "$blob" "$seen" && continue
		if [ "$kind" = mindformers-yaml ]; then
			# training files only: run_mode train / finetune (a misspelt
			# 'fintune' included, as the release shipped it)
			git -C "$git" cat-file -p "$blob" |
				grep -qE "^run_mode: *['\"]?(train|finetune|fintune)" || continue
		fi
		echo "$blob" >> "$seen"
		local="$kind/$version/$path"
		mkdir -p "$OUT/files/$(dirname "$local")"
		git -C "$git" cat-file -p "$blob" > "$OUT/files/$local"
		printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$local" "$kind" "$version" "$repo" "$path" "$commit" \
			>> "$OUT/SOURCES.tsv"
	done
}

yamls() { git -C "$1" ls-tree -r --name-only "$2" -- configs research | grep -E '\.yaml$'; }
for v in v1.0.0 v1.1.0 v1.2.0 v1.3.0 v1.5.0 v1.7.0 master; do
	keep "$MF" mindspore-ai/mindformers mindformers-yaml "$v" "$v" $(yamls "$MF" "$v")
done
# iFlytekSpark-13B is only on the r1.0 branch (its training YAMLs at tag v1.0.2, in no other
# release): kept from there
keep "$MF" mindspore-ai/mindformers mindformers-yaml v1.0.2 v1.0.2 \
	$(git -C "$MF" ls-tree -r --name-only v1.0.2 -- research/iflytekspark | grep -E '\.yaml$')
# the releases added later (v1.6.0, v1.8.0, v1.9.0): after the others, so that a file
# already kept stays under the version it was kept at; each keeps only the files no
# version above has
for v in v1.6.0 v1.8.0 v1.9.0; do
	keep "$MF" mindspore-ai/mindformers mindformers-yaml "$v" "$v" $(yamls "$MF" "$v")
done
# the example scripts at 23.04, core_v0.12.0, d98e8a64 and then the release tag core_v0.15.0
# (after the others: its files that one of them has stay where they are)
for v in 23.04 core_v0.12.0 d98e8a64ddf3 core_v0.15.0; do
	ref=$v
	[ "$v" = d98e8a64ddf3 ] && ref=d98e8a64ddf34856e74b24714e3bedb2f5a39553
	keep "$MG" NVIDIA/Megatron-LM megatron-example "$v" "$ref" \
		$(git -C "$MG" ls-tree -r --name-only "$ref" -- examples | grep -E '\.sh$')
done
# the functional tests at d98e8a64, then at the release tags core_v0.12.0 and core_v0.15.0
# (each config that is the same file as one kept before is not kept again)
for v in d98e8a64ddf3 core_v0.12.0 core_v0.15.0; do
	ref=$v
	[ "$v" = d98e8a64ddf3 ] && ref=d98e8a64ddf34856e74b24714e3bedb2f5a39553
	keep "$MG" NVIDIA/Megatron-LM megatron-functional "$v" "$ref" \
		$(git -C "$MG" ls-tree -r --name-only "$ref" -- \
			tests/functional_tests/test_cases/gpt tests/functional_tests/test_cases/moe |
			grep -E 'model_config\.yaml$')
done
keep "$MS" Ascend/MindSpeed-LLM mindspeed-script c77308a14bfc c77308a14bfcb1aa7ca61da9c1aa24a893cb1b91 \
	$(git -C "$MS" ls-tree -r --name-only c77308a14bfcb1aa7ca61da9c1aa24a893cb1b91 -- examples |
		grep -E '/pretrain_[^/]*\.sh$')
# the 1.0.0 release (tag v1.0.0, 062fb4fc): its legacy/ and mcore/ pretrain scripts, none of
# them the same file as one at c77308a1
keep "$MS" Ascend/MindSpeed-LLM mindspeed-script v1.0.0 v1.0.0 \
	$(git -C "$MS" ls-tree -r --name-only v1.0.0 -- examples | grep -E '/pretrain_[^/]*\.sh$')
# the later releases, the newest of each line first (2.x: v2.3.0 1bdd9700; 26.x: v26.1.0
# 2b7130ca), then the earlier 2.x ones (v2.0.0 3a712f58, v2.1.0 7f128db1, v2.2.0 53f3639c)
# and 26.x's first release (v26.0.0 57c33296): each script not already kept above, under
# the first of these tags that has it
for v in v2.3.0 v26.1.0 v2.0.0 v2.1.0 v2.2.0 v26.0.0; do
	keep "$MS" Ascend/MindSpeed-LLM mindspeed-script "$v" "$v" \
		$(git -C "$MS" ls-tree -r --name-only "$v" -- examples | grep -E '/pretrain_[^/]*\.sh$')
done

# Hugging Face config.json files of the model types the files above name, as
# repositories on GitHub keep them unchanged (the Hugging Face file, its key order
# and spacing): ai-dynamo/aiconfigurator's model_configs/ ("<org>--<model>_config.json",
# each at the newest commit that has it), casys-kaist/LLMServingSim's configs/model/
# ("the full raw config.json from the model's HuggingFace repo", its README), and
# MindSpore Transformers' test copies (its DeepSeek-V3 one is aiconfigurator's, blob for
# blob, so kept once; aiconfigurator's Llama-4-Scout and Qwen3-VL copies leave keys of the
# Hugging Face file out, so are not kept). Each is kept as hf-config/<org>--<model>/config.json.
# hf GIT REPO VERSION COMMIT PATH NAME
hf() {
	git=$1 repo=$2 version=$3 commit=$4 path=$5 name=$6
	blob=$(git -C "$git" rev-parse "$commit:$path")
	grep -qx "$blob" "$seen" && return 0
	echo "$blob" >> "$seen"
	local="hf-config/$name/config.json"
	mkdir -p "$OUT/files/hf-config/$name"
	git -C "$git" cat-file -p "$blob" > "$OUT/files/$local"
	printf '%s\thf-config\t%s\t%s\t%s\t%s\n' "$local" "$version" "$repo" "$path" "$commit" \
		>> "$OUT/SOURCES.tsv"
}
A1=095f58a51c4ca8e61b66ec108d86f223f8d559ce A1D=aic-core/src/aiconfigurator_core/model_configs
A0=b5369e1fb89f7ad67b160c749227b415f4e7fe01 A2=1b7cfb10a6fa06880ad7911db5ddb949882ff76a
A0D=src/aiconfigurator/model_configs
for m in meta-llama--Llama-2-7b-hf meta-llama--Llama-2-13b-hf meta-llama--Llama-2-70b-hf \
	Qwen--Qwen2.5-1.5B Qwen--Qwen2.5-7B Qwen--Qwen2.5-32B Qwen--Qwen2.5-72B; do
	hf "$AIC" ai-dynamo/aiconfigurator aiconfigurator "$A0" "$A0D/${m}_config.json" "$m"
done
for m in meta-llama--Meta-Llama-3.1-8B meta-llama--Meta-Llama-3.1-70B meta-llama--Meta-Llama-3.1-405B \
	Qwen--Qwen3-0.6B Qwen--Qwen3-1.7B Qwen--Qwen3-8B Qwen--Qwen3-32B Qwen--Qwen3-30B-A3B \
	Qwen--Qwen3-235B-A22B Qwen--Qwen3-Coder-480B-A35B-Instruct deepseek-ai--DeepSeek-V3 \
	deepseek-ai--DeepSeek-R1 deepseek-ai--DeepSeek-V3.2 mistralai--Mixtral-8x7B-v0.1 \
	mistralai--Mixtral-8x22B-v0.1 moonshotai--Kimi-K2-Instruct openai--gpt-oss-20b \
	openai--gpt-oss-120b MiniMaxAI--MiniMax-M2.7 Qwen--Qwen3.5-27B \
	nvidia--Nemotron-H-56B-Base-8K deepseek-ai--DeepSeek-V4-Flash; do
	hf "$AIC" ai-dynamo/aiconfigurator aiconfigurator "$A1" "$A1D/${m}_config.json" "$m"
done
hf "$AIC" ai-dynamo/aiconfigurator aiconfigurator "$A2" \
	"$A0D/Qwen--Qwen3-Next-80B-A3B-Thinking_config.json" Qwen--Qwen3-Next-80B-A3B-Thinking
S1=5daddb21a545658d5150b535712d0494584b5278
# (its Qwen3-32B, Llama-3.1-8B / 70B and Mixtral-8x7B are aiconfigurator's but for the
# final newline or the indentation: not kept twice)
hf "$SIM" casys-kaist/LLMServingSim LLMServingSim "$S1" configs/model/Qwen/Qwen3-30B-A3B-Instruct-2507.json \
	Qwen--Qwen3-30B-A3B-Instruct-2507
# citsjtu2020/LLM-Prof's sglang/Model_Config.md holds Hugging Face config.json files as
# they are, each under a line with the model's name: the block of Qwen3-14B (the model of
# MindSpeed-LLM's Qwen3-14B FSDP2 launches), from that line to the first line "}".
# hf_block GIT REPO VERSION COMMIT PATH MODEL NAME
hf_block() {
	git=$1 repo=$2 version=$3 commit=$4 path=$5 model=$6 name=$7
	local="hf-config/$name/config.json"
	mkdir -p "$OUT/files/hf-config/$name"
	git -C "$git" show "$commit:$path" |
		awk -v m="$model" '$0 == m { f = 1; next } f && /^}$/ { print; exit } f' \
		> "$OUT/files/$local"
	printf '%s\thf-config\t%s\t%s\t%s (the %s block)\t%s\n' "$local" "$version" "$repo" \
		"$path" "$model" "$commit" >> "$OUT/SOURCES.tsv"
}
hf_block "$PROF" citsjtu2020/LLM-Prof LLM-Prof 8434c8d19c396b2f95d92a67845a7c0a0e0dd512 \
	sglang/Model_Config.md Qwen3-14B Qwen--Qwen3-14B
M1=$(git -C "$MF" rev-parse master)
hf "$MF" mindspore-ai/mindformers mindformers-tests "$M1" \
	tests/st/test_multi_cards_cases/test_model/test_deepseek3/config.json mindformers--test_deepseek3
hf "$MF" mindspore-ai/mindformers mindformers-tests "$M1" \
	tests/st/test_multi_cards_cases/test_model/test_telechat3/config.json mindformers--test_telechat3

# MindSpeed-LLM's fine-tuning and other training-stage launches beside the pretrain scripts:
# tune_* (full fine-tune, LoRA / QLoRA), lora_finetune_*, dpo_*, simpo_*, reward_* and
# train_orm_* / train_prm_* (reward models), trl_ppo_*; not examples/fsdp2/ (FSDP2 launches
# read apart) nor the Ray / Hydra RL launchers (examples/rlhf/: their run is a YAML). The same
# versions in the same order as the pretrain scripts, each distinct file once, under the
# first of them that has it (after the Hugging Face files: the rows above stay as they were)
tunes() {
	git -C "$MS" ls-tree -r --name-only "$1" -- examples | grep -v '^examples/fsdp2/' |
		grep -E '/(tune|lora_finetune|dpo|simpo|reward|train_orm|train_prm|trl_ppo)_[^/]*\.sh$'
}
keep "$MS" Ascend/MindSpeed-LLM mindspeed-script c77308a14bfc c77308a14bfcb1aa7ca61da9c1aa24a893cb1b91 \
	$(tunes c77308a14bfcb1aa7ca61da9c1aa24a893cb1b91)
for v in v1.0.0 v2.3.0 v26.1.0 v2.0.0 v2.1.0 v2.2.0; do
	keep "$MS" Ascend/MindSpeed-LLM mindspeed-script "$v" "$v" $(tunes "$v")
done

# MindSpeed-LLM's CI launch scripts at c77308a1: every tests/st/shell_scripts/*.sh and
# tests/pipeline/**.sh (the gate's and the pipeline's system tests: cut-down models of the
# examples' families, the launch as a user copies it, with the commands CI runs around it),
# kept as their own kind (mindspeed-ci) after the rows above
CI=c77308a14bfcb1aa7ca61da9c1aa24a893cb1b91
keep "$MS" Ascend/MindSpeed-LLM mindspeed-ci c77308a14bfc "$CI" \
	$(git -C "$MS" ls-tree -r --name-only "$CI" -- tests/st/shell_scripts tests/pipeline | grep -E '\.sh$')

# The CI recipes beside the functional tests, where Megatron-LM keeps them
# (tests/test_utils/recipes/<platform>/*.yaml at d98e8a64, tests/test_utils/recipes/*.yaml
# at core_v0.12.0 and core_v0.15.0), each version's beside its configs: the device count
# of each test (memopt reads them; recipe_devices.py writes devices.tsv from them).
# Support files, not corpus files: listed in SUPPORT.tsv.
printf 'file\trepo\tpath\tcommit\n' > "$OUT/SUPPORT.tsv"
for v in d98e8a64ddf3 core_v0.12.0 core_v0.15.0; do
	ref=$v
	[ "$v" = d98e8a64ddf3 ] && ref=d98e8a64ddf34856e74b24714e3bedb2f5a39553
	C=$(git -C "$MG" rev-parse "$ref^{commit}")
	git -C "$MG" ls-tree -r "$C" -- tests/test_utils/recipes | while read -r mode type blob path; do
		local="megatron-functional/$v/$path"
		mkdir -p "$OUT/files/$(dirname "$local")"
		git -C "$MG" cat-file -p "$blob" > "$OUT/files/$local"
		printf '%s\tNVIDIA/Megatron-LM\t%s\t%s\n' "$local" "$path" "$C" >> "$OUT/SUPPORT.tsv"
	done
done
# MindSpeed-LLM's FSDP2 launches (train_fsdp2.py) name their run's YAML relative to the
# checkout they run in (examples/fsdp2/<model>/<name>.yaml): each version's YAMLs kept at the
# same path under that version's folder, the launch directory check.py runs them from.
# Support files too (listed in SUPPORT.tsv).
for v in c77308a14bfc v26.1.0 v26.0.0; do
	ref=$v
	[ "$v" = c77308a14bfc ] && ref=c77308a14bfcb1aa7ca61da9c1aa24a893cb1b91
	C=$(git -C "$MS" rev-parse "$ref^{commit}")
	git -C "$MS" ls-tree -r "$C" -- examples/fsdp2 | grep -E '\.ya?ml$' |
		while read -r mode type blob path; do
			dst="mindspeed-script/$v/$path"
			mkdir -p "$OUT/files/$(dirname "$dst")"
			git -C "$MS" cat-file -p "$blob" > "$OUT/files/$dst"
			printf '%s\tAscend/MindSpeed-LLM\t%s\t%s\n' "$dst" "$path" "$C" >> "$OUT/SUPPORT.tsv"
		done
done
# The YAMLs MindSpeed-LLM's CI FSDP2 launches name (tests/**.yaml at c77308a1, relative to
# the checkout root), kept at their paths under the CI scripts' folder, the launch directory
# check.py runs them from. Support files too.
git -C "$MS" ls-tree -r "$CI" -- tests | grep -E '\.ya?ml$' |
	while read -r mode type blob path; do
		dst="mindspeed-ci/c77308a14bfc/$path"
		mkdir -p "$OUT/files/$(dirname "$dst")"
		git -C "$MS" cat-file -p "$blob" > "$OUT/files/$dst"
		printf '%s\tAscend/MindSpeed-LLM\t%s\t%s\n' "$dst" "$path" "$CI" >> "$OUT/SUPPORT.tsv"
	done
python3 "$OUT/recipe_devices.py"
