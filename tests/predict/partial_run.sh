#!/usr/bin/env bash
# ctest: slow
# partial_run.sh — issue 12's must-show: `pitstop predict --format json` on the
# first 40 iterations of a real 1-epoch cnn run (Fashion-MNIST) gives
# predicted_epoch_s within 5% of the run's recorded epoch, its interval covering
# it (bench/predict-partial --check; exit 77, skipped, only when the shared
# machine's pace changed by more than 5% within the epoch, or train is not built).
set -euo pipefail
: "${PITSTOP:?}" "${PIT_SOURCE_DIR:?}"
unset OPENBLAS_CORETYPE
help=$("$PITSTOP" train --help 2>&1 || true)
if [[ "$help" == *"not part of this build"* ]]; then
  echo "pitstop train is not part of this build: skipped"
  exit 77
fi
exec /usr/bin/python3 "$PIT_SOURCE_DIR/bench/predict-partial" --build-dir "$(dirname "$PITSTOP")" --check
