#!/usr/bin/env bash
# ctest: slow
# job.sh — pitstop.Job on real gloo process groups (tests/python/job_test.py): a 1 → 2 → 1 resize
# with every sample once and the parameters of an uninterrupted run, stop agreement with one rank
# signalled (SIGUSR1, SIGTERM), the plain run, a restart outside pitstop, refusals, atomic saves.
. "$PIT_SOURCE_DIR/tests/python/common.bash"
need_torch
PYTHONPATH="$PYTHONPATH:$PIT_SOURCE_DIR/tests/python" "$PY" "$PIT_SOURCE_DIR/tests/python/job_test.py"
