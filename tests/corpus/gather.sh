#!/bin/sh
# Copies the corpus files out of local snapshots of their repositories (git
# directories, e.g. the ones the `fetch` tool brings) and writes
# SOURCES.tsv: local file, kind, version, repository, path, commit. Each
# distinct file (git blob) is kept once, under the first version listed
# that has it. Usage: tests/corpus/gather.sh MINDFORMERS_GIT MEGATRON_GIT MINDSPEED_GIT
# (run from the repository root; it rewrites tests/corpus/files/).
set -eu
MF=$1 MG=$2 MS=$3
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
for v in 23.04 core_v0.12.0 d98e8a64ddf3; do
	ref=$v
	[ "$v" = d98e8a64ddf3 ] && ref=d98e8a64ddf34856e74b24714e3bedb2f5a39553
	keep "$MG" NVIDIA/Megatron-LM megatron-example "$v" "$ref" \
		$(git -C "$MG" ls-tree -r --name-only "$ref" -- examples | grep -E '\.sh$')
done
keep "$MG" NVIDIA/Megatron-LM megatron-functional d98e8a64ddf3 d98e8a64ddf34856e74b24714e3bedb2f5a39553 \
	$(git -C "$MG" ls-tree -r --name-only d98e8a64ddf34856e74b24714e3bedb2f5a39553 -- \
		tests/functional_tests/test_cases/gpt tests/functional_tests/test_cases/moe |
		grep -E 'model_config\.yaml$')
keep "$MS" Ascend/MindSpeed-LLM mindspeed-script c77308a14bfc c77308a14bfcb1aa7ca61da9c1aa24a893cb1b91 \
	$(git -C "$MS" ls-tree -r --name-only c77308a14bfcb1aa7ca61da9c1aa24a893cb1b91 -- examples |
		grep -E '/pretrain_[^/]*\.sh$')
# the 1.0.0 release (tag v1.0.0, 062fb4fc): its legacy/ and mcore/ pretrain scripts, none of
# them the same file as one at c77308a1
keep "$MS" Ascend/MindSpeed-LLM mindspeed-script v1.0.0 v1.0.0 \
	$(git -C "$MS" ls-tree -r --name-only v1.0.0 -- examples | grep -E '/pretrain_[^/]*\.sh$')

# The CI recipes beside the functional tests, where Megatron-LM keeps them
# (tests/test_utils/recipes/<platform>/*.yaml): the device count of each test
# (memopt reads them; recipe_devices.py writes devices.tsv from them).
# Support files, not corpus files: listed in SUPPORT.tsv.
C=d98e8a64ddf34856e74b24714e3bedb2f5a39553
printf 'file\trepo\tpath\tcommit\n' > "$OUT/SUPPORT.tsv"
git -C "$MG" ls-tree -r "$C" -- tests/test_utils/recipes | while read -r mode type blob path; do
	local="megatron-functional/d98e8a64ddf3/$path"
	mkdir -p "$OUT/files/$(dirname "$local")"
	git -C "$MG" cat-file -p "$blob" > "$OUT/files/$local"
	printf '%s\tNVIDIA/Megatron-LM\t%s\t%s\n' "$local" "$path" "$C" >> "$OUT/SUPPORT.tsv"
done
python3 "$OUT/recipe_devices.py"
