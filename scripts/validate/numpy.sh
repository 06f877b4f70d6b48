#!/usr/bin/env bash
# numpy.sh — random rows of a 512 MiB float32 array (512 Ki rows of 1 KiB)
# through np.memmap (/usr/bin/python3 with numpy), 30000 rows drawn with a
# fixed seed; compared without a limit and under 1/4, 1/8 and 1/16 of the
# file, read_ahead_kb 128 and 8192 (no limit). Usage: numpy.sh.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
need_probe
need_py_module numpy python3-numpy

rows=${NUMPY_ROWS:-524288}
cols=256
count=${NUMPY_COUNT:-30000}
data=$VALIDATE_DATA/numpy
rec_dir=$VALIDATE_REC
mkdir -p "$data" "$rec_dir"
arr=$data/rows.f32
make_data "$arr" "numpy rows=$rows cols=$cols seed=fixed" "$PY" "$validate_dir/gen.py" numpy "$arr" "$rows" "$cols"
size=$(data_size "$arr")

rec=$rec_dir/numpy.flr
record "$rec" "$data" -- "$PY" "$validate_dir/progs/numpy_rows.py" "$arr" "$cols" "$count"
# Random rows under a limit with 8 MiB read-around would read tens of GB.
run_settings numpy numpy mmap "$rec" "$size" "0:128 0:8192 4:128 8:128 16:128"
cleanup_data "$data"
