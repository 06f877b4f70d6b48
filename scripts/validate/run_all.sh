#!/usr/bin/env bash
# run_all.sh — the real-program validation: every program's script (data
# set made from fixed seeds, recorded with faultline record, compared with
# faultline compare under its settings), then the table of all cases.
#
# Usage: scripts/validate/run_all.sh [PROGRAM...]
#   PROGRAM: sqlite grep git numpy lmdb (default: all of them)
# Environment: FAULTLINE, VALIDATE_DATA, VALIDATE_OUT, VALIDATE_REPS,
# VALIDATE_FORCE, VALIDATE_KEEP (scripts/validate/lib.sh).
# Writes $VALIDATE_OUT/summary.{txt,csv,json}; exit status 0 when at least
# 80 % of the cases are within target (pgpgin 10 %, majflt 15 % or 8 faults),
# 1 when not, 2 when something needed is missing or a step failed.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
need_probe
programs=("$@")
[ ${#programs[@]} -gt 0 ] || programs=(sqlite grep git numpy lmdb)
for p in "${programs[@]}"; do
  [ -f "$validate_dir/$p.sh" ] || die "no script for $p ($validate_dir/$p.sh)"
done
mkdir -p "$VALIDATE_OUT"
t0=$SECONDS
for p in "${programs[@]}"; do
  t=$SECONDS
  bash "$validate_dir/$p.sh"
  log "$p: $((SECONDS - t)) s"
done
log "all programs: $((SECONDS - t0)) s"
rc=0
only=()
for p in "${programs[@]}"; do only+=("$p-"); done
"$PY" "$validate_dir/summarize.py" "$VALIDATE_OUT" --only "${only[@]}" \
  --csv "$VALIDATE_OUT/summary.csv" --json "$VALIDATE_OUT/summary.json" |
  tee "$VALIDATE_OUT/summary.txt" || rc=$?
[ -s "$VALIDATE_OUT/summary.txt" ] || rc=2
log "table: $VALIDATE_OUT/summary.txt, summary.csv, summary.json"
# Nothing of the probe's should be left behind.
if losetup -a | grep -q faultline || grep -q faultline /proc/mounts; then
  log "warning: a faultline loop device or mount is left: $(losetup -a | grep faultline; grep faultline /proc/mounts)"
fi
exit "$rc"
