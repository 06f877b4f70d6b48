#!/usr/bin/env bash
# sweep_ranks.sh — the wall time of a 500-run sweep on 1 and 2 MPI ranks
# (and on one process with its thread pool), and that every report is
# byte-identical. Usage: bench/mpi/sweep_ranks.sh [path/to/faultline]
set -euo pipefail
bin=${1:-build/release/faultline}
mpi=(mpirun --oversubscribe)
[ "$(id -u)" -eq 0 ] && mpi+=(--allow-run-as-root)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
printf 'name = "sweep500"\n[file]\nsize = "4GiB"\n[access]\npattern = "random"\nfraction = 0.005\n' \
  >"$tmp/s.toml"
args=(sweep -q "$tmp/s.toml" --vary device.read_ahead_kb=4..2000+4 --format json)
timed() {  # label, output, command...
  local label=$1 out=$2
  shift 2
  local t0 t1
  t0=$(date +%s.%N)
  "$@" -o "$out"
  t1=$(date +%s.%N)
  printf '%-34s %8.2f s\n' "$label" "$(echo "$t1 - $t0" | bc)"
}
echo "500 runs (4 GiB file, 5243 random accesses each), $(nproc) CPUs"
timed "1 process, -j1" "$tmp/a.json" "$bin" "${args[@]}" -j1
timed "1 process, -j$(nproc)" "$tmp/b.json" "$bin" "${args[@]}"
# Open MPI binds each of a few ranks to one core: -j defaults to the cores
# a rank may use, so one bound rank runs one run at a time.
timed "mpirun -np 1 (bound to a core)" "$tmp/c.json" "${mpi[@]}" -np 1 "$bin" "${args[@]}"
timed "mpirun -np 1 --bind-to none" "$tmp/f.json" "${mpi[@]}" -np 1 --bind-to none "$bin" "${args[@]}"
timed "mpirun -np 2, -j1 each" "$tmp/d.json" "${mpi[@]}" -np 2 "$bin" "${args[@]}" -j1
timed "mpirun -np 2" "$tmp/e.json" "${mpi[@]}" -np 2 "$bin" "${args[@]}"
timed "mpirun -np 2 --bind-to none" "$tmp/g.json" "${mpi[@]}" -np 2 --bind-to none "$bin" "${args[@]}"
for f in b c d e f g; do cmp "$tmp/a.json" "$tmp/$f.json"; done
echo "every report byte-identical to the first"
