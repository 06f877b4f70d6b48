#!/usr/bin/env bash
# lmdb.sh — random gets from a 400 MB LMDB file (1 M keys, values of 350
# random bytes; /usr/bin/python3 with py-lmdb, read-only, no lock file),
# 20000 keys drawn with a fixed seed, with LMDB's default map (readahead)
# and with readahead=False (MDB_NORDAHEAD: madvise(MADV_RANDOM) on the map);
# compared without a limit and under 1/4 and 1/16 of the file.
# Usage: lmdb.sh [ra|nordahead]... (default both). Environment: lib.sh.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
need_probe
need_py_module lmdb python3-lmdb
modes=("$@")
[ ${#modes[@]} -gt 0 ] || modes=(ra nordahead)

keys=${LMDB_KEYS:-1000000}
vsize=350
gets=${LMDB_GETS:-20000}
data=$VALIDATE_DATA/lmdb
rec_dir=$VALIDATE_REC
mkdir -p "$data" "$rec_dir"
db=$data/kv.mdb
make_data "$db" "lmdb keys=$keys vsize=$vsize seed=fixed" "$PY" "$validate_dir/gen.py" lmdb "$db" "$keys" "$vsize"
size=$(data_size "$db")

for mode in "${modes[@]}"; do
  case $mode in
    ra) flag=1 access=mmap settings="0:128 0:8192 4:128 16:128" ;;
    nordahead) flag=0 access=mmap-random settings="0:128 4:128 16:128" ;;
    *) die "unknown mode $mode (ra or nordahead)" ;;
  esac
  rec=$rec_dir/lmdb-$mode.flr
  record "$rec" "$data" -- "$PY" "$validate_dir/progs/lmdb_gets.py" "$db" "$gets" "$flag"
  run_settings "lmdb-$mode" lmdb "$access" "$rec" "$size" "$settings"
done
cleanup_data "$data"
