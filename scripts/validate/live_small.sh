#!/usr/bin/env bash
# live_small.sh — two small real-program cases of scripts/validate, for
# ctest (label live): SQLite point lookups through PRAGMA mmap_size in a
# 31 MiB database without a limit (mmap read-around and fault-around), and
# numpy np.memmap random rows of a 64 MiB array under a 32 MiB cgroup limit
# (reclaim and refaults; numpy itself holds 17 MiB of anonymous memory),
# each recorded with faultline record and compared (the model against the
# program run again) with faultline compare --reps 3. Exit 0 when both are
# within target (pgpgin 10 %, majflt 15 % or 8 faults:
# scripts/validate/summarize.py), 1 when
# not, 2 on an error; prints "skipped: ..." and exits 0 without root,
# /dev/loop-control, strace or /usr/bin/python3 with sqlite3 and numpy.
# Takes about 15 s. Usage: live_small.sh [path/to/faultline]
set -euo pipefail
FAULTLINE=${1:-${FAULTLINE:-$(cd "$(dirname "$0")/../.." && pwd)/build/release/faultline}}
skip() {
  echo "skipped: $*"
  exit 0
}
[ "$(id -u)" -eq 0 ] || skip "needs root (loop devices, mounts, cgroups)"
[ -e /dev/loop-control ] || skip "needs /dev/loop-control"
command -v strace >/dev/null || skip "needs strace"
[ -x /usr/bin/python3 ] || skip "needs /usr/bin/python3"
/usr/bin/python3 -c 'import sqlite3' 2>/dev/null || skip "needs /usr/bin/python3 with sqlite3"
/usr/bin/python3 -c 'import numpy' 2>/dev/null || skip "needs /usr/bin/python3 with numpy (python3-numpy)"
[ -x "$FAULTLINE" ] || { echo "live_small.sh: no faultline binary at $FAULTLINE" >&2; exit 2; }

work=$(mktemp -d /var/tmp/faultline-live-small.XXXXXX)
trap 'rm -rf "$work"' EXIT
export FAULTLINE VALIDATE_DATA=$work VALIDATE_OUT=$work/results VALIDATE_REPS=3 VALIDATE_FORCE=1
. "$(dirname "$0")/lib.sh"
mkdir -p "$work/sqlite" "$work/numpy" "$VALIDATE_REC"

db=$work/sqlite/small.sqlite
make_data "$db" "sqlite rows=150000" "$PY" "$validate_dir/gen.py" sqlite "$db" 150000
record "$work/recordings/sqlite.flr" "$work/sqlite" -- \
  "$PY" "$validate_dir/progs/sqlite_lookups.py" "$db" 3000 1073741824
case_run sqlite-mmap sqlite3 mmap 0 128 "$work/recordings/sqlite.flr" "$(data_size "$db")"

arr=$work/numpy/small.f32
make_data "$arr" "numpy rows=65536 cols=256" "$PY" "$validate_dir/gen.py" numpy "$arr" 65536 256
record "$work/recordings/numpy.flr" "$work/numpy" -- \
  "$PY" "$validate_dir/progs/numpy_rows.py" "$arr" 256 4000
case_run numpy numpy mmap "$(mib 32)" 128 "$work/recordings/numpy.flr" "$(data_size "$arr")"

"$PY" "$validate_dir/summarize.py" "$VALIDATE_OUT" --share 1.0
