#!/usr/bin/env bash
# helpers.sh — runs tests/protocol/helpers.py (python/pitstop.py's helpers; standard library only,
# so it runs without torch: pitstop.py must work there too).
set -euo pipefail
PYTHONPATH="$PIT_SOURCE_DIR/python:$PIT_SOURCE_DIR/tests/protocol" /usr/bin/python3 -m helpers
