#!/bin/sh
# `memopt size` through the CLI: every returned layout re-estimates to the
# peak it was returned with (presets dense and MoE; MindSpore Transformers
# training YAMLs given as the base, rewritten with every other line kept;
# Megatron-LM runs' arguments with the layout's megatron_args, imported
# back). tests/size/roundtrip.py says what each case checks.
cd "$(dirname "$0")/../.." && exec /usr/bin/python3 tests/size/roundtrip.py "${MEMOPT:-build/memopt}"
