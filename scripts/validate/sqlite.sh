#!/usr/bin/env bash
# sqlite.sh — SQLite point lookups (Python's sqlite3 module, /usr/bin/python3)
# in a database of about 330 MB (1.5 M rows of 150-250 random bytes), read
# through a mapping (PRAGMA mmap_size=1GiB) and with pread(2) (no mmap),
# each recorded once and compared without a limit and under 1/4 and 1/16 of
# the database with read_ahead_kb 128, and without a limit with 8192.
# Usage: sqlite.sh [mmap|pread]... (default both). Environment: lib.sh.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
need_probe
need_py_module sqlite3 libpython3-stdlib
modes=("$@")
[ ${#modes[@]} -gt 0 ] || modes=(mmap pread)

rows=${SQLITE_ROWS:-1500000}
lookups=${SQLITE_LOOKUPS:-20000}
data=$VALIDATE_DATA/sqlite
rec_dir=$VALIDATE_REC
mkdir -p "$data" "$rec_dir"
db=$data/lookups.sqlite
make_data "$db" "sqlite rows=$rows seed=fixed" "$PY" "$validate_dir/gen.py" sqlite "$db" "$rows"
size=$(data_size "$db")

for mode in "${modes[@]}"; do
  case $mode in
    mmap) mmap_bytes=1073741824 ;;
    pread) mmap_bytes=0 ;;
    *) die "unknown mode $mode (mmap or pread)" ;;
  esac
  rec=$rec_dir/sqlite-$mode.flr
  record "$rec" "$data" -- "$PY" "$validate_dir/progs/sqlite_lookups.py" "$db" "$lookups" "$mmap_bytes"
  # No 8192 under a limit: random lookups with 8 MiB read-around windows in
  # a cache of 20-80 MiB read 100+ GB (8 minutes a run).
  run_settings "sqlite-$mode" sqlite3 "$mode" "$rec" "$size" "0:128 0:8192 4:128 16:128"
done
cleanup_data "$data"
