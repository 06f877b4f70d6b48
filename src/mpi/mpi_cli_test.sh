#!/usr/bin/env bash
# mpi_cli_test.sh — faultline run and sweep under mpirun: the report of 3
# ranks is byte-identical to one process's, and a run that fails on one
# rank stops the job with that run's error, exit status 2 and no output.
# Skips itself without mpirun. Usage: mpi_cli_test.sh path/to/faultline
set -u
bin="$1"
if ! command -v mpirun >/dev/null; then
  echo "skipped: no mpirun (openmpi-bin)"
  exit 0
fi
mpi=(mpirun --oversubscribe -np 3)
[ "$(id -u)" -eq 0 ] && mpi+=(--allow-run-as-root)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
pass=0
fail=0
check() {  # name, then the command's status test
  if eval "$2"; then pass=$((pass + 1)); else fail=$((fail + 1)); echo "FAIL: $1"; fi
}

printf 'name = "small"\n[file]\nsize = "64MiB"\n[access]\nfraction = 0.05\n[[variant]]\nname = "base"\nset = []\n[[variant]]\nname = "p1p2"\nset = ["kernel.mmap_miss_p1=true", "kernel.mmap_miss_p2=true"]\n' >"$tmp/s.toml"
args=(sweep -q "$tmp/s.toml" --vary device.read_ahead_kb=128,512,2048 --vary access.pattern=random,sequential)
"$bin" "${args[@]}" --format json -o "$tmp/one.json"
"${mpi[@]}" "$bin" "${args[@]}" --format json -o "$tmp/three.json" 2>"$tmp/err"
check "sweep json on 3 ranks equals one process's" 'cmp -s "$tmp/one.json" "$tmp/three.json"'
"$bin" "${args[@]}" --format csv -o "$tmp/one.csv"
"${mpi[@]}" "$bin" "${args[@]}" --format csv -o "$tmp/three.csv" 2>>"$tmp/err"
check "sweep csv on 3 ranks equals one process's" 'cmp -s "$tmp/one.csv" "$tmp/three.csv"'
"$bin" run -q "$tmp/s.toml" --format json -o "$tmp/run1.json"
"${mpi[@]}" "$bin" run -q "$tmp/s.toml" --format json -o "$tmp/run3.json" 2>>"$tmp/err"
check "run on 3 ranks equals one process's" 'cmp -s "$tmp/run1.json" "$tmp/run3.json"'
"$bin" run -q "$tmp/s.toml" --repeat 4 --format json -o "$tmp/rep1.json"
"${mpi[@]}" "$bin" run -q "$tmp/s.toml" --repeat 4 --format json -o "$tmp/rep3.json" 2>>"$tmp/err"
check "a run of 4 seeds on 3 ranks equals one process's" 'grep -q repetitions "$tmp/rep1.json" && cmp -s "$tmp/rep1.json" "$tmp/rep3.json"'
"$bin" run -q "$tmp/s.toml" --timeline 50 --format json -o "$tmp/tl1.json"
"${mpi[@]}" "$bin" run -q "$tmp/s.toml" --timeline 50 --format json -o "$tmp/tl3.json" 2>>"$tmp/err"
check "timelines on 3 ranks equal one process's" 'grep -q timeline "$tmp/tl1.json" && cmp -s "$tmp/tl1.json" "$tmp/tl3.json"'

# One run of the sweep fails when it runs (its trace is missing).
printf '1\n2\n3\n' >"$tmp/t1.txt"
cp "$tmp/t1.txt" "$tmp/t2.txt"
printf 'name = "trace"\n[file]\nsize = "1MiB"\n[access]\npattern = "trace"\ntrace = "t1.txt"\n' >"$tmp/t.toml"
"${mpi[@]}" "$bin" sweep -q "$tmp/t.toml" --vary "access.trace=$tmp/t1.txt,$tmp/gone.txt,$tmp/t2.txt" \
  --format json -o "$tmp/bad.json" >/dev/null 2>"$tmp/bad.err"
rc=$?
check "a failed run stops the job with status 2 (got $rc)" '[ "$rc" -eq 2 ]'
check "the error names the run's trace" 'grep -q "gone.txt: cannot open trace file" "$tmp/bad.err"'
check "the error is said once" '[ "$(grep -c "gone.txt" "$tmp/bad.err")" -eq 1 ]'
check "no output file" '[ ! -e "$tmp/bad.json" ]'
# Several runs fail on different ranks: the error is the one-process
# command's, that of the first failed run in plan order.
cp "$tmp/t1.txt" "$tmp/t3.txt"
many="access.trace=$tmp/t1.txt,$tmp/t3.txt,$tmp/gone2.txt,$tmp/t2.txt,$tmp/gone1.txt,$tmp/gone3.txt"
"$bin" sweep -q "$tmp/t.toml" --vary "$many" --format json -o "$tmp/bad1.json" 2>"$tmp/bad1.err"
"${mpi[@]}" "$bin" sweep -q "$tmp/t.toml" --vary "$many" --format json -o "$tmp/bad3.json" 2>"$tmp/bad3.err"
check "with several failures, the first in plan order is said, as by one process" \
  'grep -q gone2.txt "$tmp/bad1.err" && [ "$(grep "^faultline:" "$tmp/bad3.err")" = "$(cat "$tmp/bad1.err")" ]'
"${mpi[@]}" "$bin" keys >/dev/null 2>"$tmp/keys.err"
rc=$?
check "other commands are refused under mpirun (status $rc)" '[ "$rc" -ne 0 ] && grep -q "only run and sweep" "$tmp/keys.err"'

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ] || { cat "$tmp/err"; exit 1; }
