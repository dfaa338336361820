#!/bin/sh
# `memopt size` on every Megatron-LM CI run kept in tests: the run's own
# layout is among the fitting ones and its predicted step time within the
# time model's error of the step time the run logged (tests/size/ci_runs.py
# says how each is read).
cd "$(dirname "$0")/../.." && exec /usr/bin/python3 tests/size/ci_runs.py "${MEMOPT:-build/memopt}"
