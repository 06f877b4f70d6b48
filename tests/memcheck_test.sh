#!/usr/bin/env bash
# The model under Valgrind memcheck: no invalid access and no uninitialised
# value that decides a branch, and reports byte-identical to the native run
# (an uninitialised read that decided an output would show as a difference).
# Small scenarios of every engine: the seed 1 matrix with repetitions and a
# timeline, seed 4's tmpfs, several files and streams, the concurrent engine.
# Usage: memcheck_test.sh FAULTLINE_BINARY SOURCE_DIR
set -uo pipefail
bin="$1"
src="$2"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
pass=0
fail=0
one() {  # name, arguments of faultline run...
  local name="$1"
  shift
  if ! valgrind -q --error-exitcode=99 --exit-on-first-error=yes "$bin" run -q --format json \
    -o "$tmp/vg.json" "$@" 2>"$tmp/vg.err"; then
    fail=$((fail + 1)); echo "FAIL: $name under memcheck:"; head -30 "$tmp/vg.err"; return
  fi
  "$bin" run -q --format json -o "$tmp/native.json" "$@"
  if cmp -s "$tmp/vg.json" "$tmp/native.json"; then
    pass=$((pass + 1))
  else
    fail=$((fail + 1)); echo "FAIL: $name: the report under memcheck differs from the native one"
  fi
}
one "seed 1, repeated, with a timeline" --set file.size=64MiB --set machine.memory=1GiB \
  --repeat 2 --timeline 100 -j2
one "seed 4 (tmpfs)" "$src/scenarios/seed4-shmem-fault-around.toml" --set file.size=16MiB
one "several files and streams" "$src/scenarios/examples/index-and-log.toml" \
  --set machine.memory_limit=32MiB --set files.index.size=64MiB --set files.log.size=64MiB
one "concurrent engine" "$src/scenarios/seed2-vma-refcnt.toml"
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
