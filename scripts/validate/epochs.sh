#!/usr/bin/env bash
# epochs.sh — the evidence for the recording's epochs (docs/model_fidelity.md,
# "Real programs"): the cases where the replay and the program part under a
# small limit, recorded again with 5 ms epochs instead of 100 ms
# (faultline record --epoch-ms 5) and compared again. Not part of the
# matrix of run_all.sh (its figure is with the default epochs).
# Usage: epochs.sh [EPOCH_MS] (default 5). Environment: lib.sh; the data sets
# are those of the program scripts (made here if absent).
set -euo pipefail
dir=$(cd "$(dirname "$0")" && pwd)
ms=${1:-5}
[[ "$ms" =~ ^[0-9]+$ ]] || { echo "epochs.sh: EPOCH_MS must be a number of milliseconds" >&2; exit 2; }
base=${VALIDATE_DATA:-/var/tmp/faultline-validate}
export VALIDATE_RECORD_OPTS="--epoch-ms $ms"
export VALIDATE_REC=$base/recordings-epoch$ms
export VALIDATE_OUT=$base/results-epoch$ms
VALIDATE_SETTINGS="16:128" bash "$dir/sqlite.sh" mmap
VALIDATE_SETTINGS="16:128 4:128" bash "$dir/lmdb.sh" ra
VALIDATE_SETTINGS="8:8192 8:128" bash "$dir/git.sh"
/usr/bin/python3 "$dir/summarize.py" "$VALIDATE_OUT" --csv "$VALIDATE_OUT/summary.csv" \
  --json "$VALIDATE_OUT/summary.json" | tee "$VALIDATE_OUT/summary.txt"
