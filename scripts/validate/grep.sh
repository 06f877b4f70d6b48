#!/usr/bin/env bash
# grep.sh — GNU grep (read(2)) over a 400 MiB text file of generated words,
# counting the lines that match an extended regular expression; compared
# without a limit and under 1/4 and 1/16 of the file, read_ahead_kb 128 and
# 8192. Usage: grep.sh. Environment: lib.sh.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
need_probe
need_cmd /usr/bin/grep /usr/bin/env

mib_size=${GREP_MIB:-400}
data=$VALIDATE_DATA/grep
rec_dir=$VALIDATE_REC
mkdir -p "$data" "$rec_dir"
text=$data/words.txt
make_data "$text" "text mib=$mib_size seed=fixed" "$PY" "$validate_dir/gen.py" text "$text" "$mib_size"
size=$(data_size "$text")

rec=$rec_dir/grep.flr
# env: the same locale (C: bytes, no multibyte decoding) when compare runs it again.
record "$rec" "$data" -- /usr/bin/env LC_ALL=C /usr/bin/grep -c -E 'q[a-z]*z[a-z]*x|^abc' "$text"
run_settings grep grep read "$rec" "$size" "0:128 0:8192 4:128 16:128 16:8192"
cleanup_data "$data"
