#!/bin/sh
# The real-file corpus (tests/corpus: MindSpore Transformers training YAMLs
# of seven releases, Megatron-LM examples at three commits and its
# functional-test configs, MindSpeed-LLM pretrain scripts) through `memopt
# import` and `memopt estimate`, against expectations written from reading
# each file and its model's published size (tests/corpus/check.py says what
# "right" means; known.tsv lists the files not right yet, with the reason).
# Under the sanitizers (SAN set) only that nothing crashes: their library
# cannot be loaded into Python for the parameter counts.
set -u
cd "$(dirname "$0")/../.."
MEMOPT=${MEMOPT:-$(pwd)/build/memopt}
if [ ! -x "$MEMOPT" ]; then echo "FAIL: $MEMOPT not built"; exit 1; fi
MEMOPT_LIB=$(dirname "$MEMOPT")/libmemopt.so
export MEMOPT MEMOPT_LIB
if [ -n "${SAN:-}" ]; then
	exec /usr/bin/python3 tests/corpus/check.py --crash-only
fi
exec /usr/bin/python3 tests/corpus/check.py
