#!/usr/bin/env bash
# Runs every libFuzzer target of fuzz/ on a copy of its seed corpus, with
# its dictionary, for SECONDS each (default 6), or for RUNS executions each
# with --runs RUNS. Builds them first (cmake --preset fuzz). A crash, a
# sanitizer report, an input slower than 1 s or above 2 GiB of memory fails
# the run; the input that did it is left in build/fuzz/artifacts/.
#
#   tools/fuzz.sh              # about 30 s in all (CI)
#   tools/fuzz.sh 600          # ten minutes each
#   tools/fuzz.sh --runs 10000000
set -euo pipefail
cd "$(dirname "$0")/.."
limit=(-max_total_time="${1:-6}")
if [ "${1:-}" = "--runs" ]; then limit=(-runs="$2"); fi
targets=(scenario trace recording import sweep_args)

cmake --preset fuzz >/dev/null
cmake --build build/fuzz -j"$(nproc)" --target fuzz_all

work=$(mktemp -d /tmp/faultline-fuzz.XXXXXX)
trap 'rm -rf "$work"' EXIT
mkdir -p build/fuzz/artifacts
for t in "${targets[@]}"; do
  mkdir -p "$work/$t"
  cp fuzz/corpus/"$t"/* "$work/$t"/
  echo "== fuzz_$t"
  start=$SECONDS
  build/fuzz/fuzz/fuzz_"$t" "$work/$t" -dict=fuzz/"$t".dict "${limit[@]}" \
    -timeout=1 -rss_limit_mb=2048 -max_len=8192 -print_final_stats=1 \
    -artifact_prefix=build/fuzz/artifacts/"$t"- 2>"$work/$t.log" || {
    tail -40 "$work/$t.log"
    echo "fuzz_$t: failed; the input is in build/fuzz/artifacts/"
    exit 1
  }
  grep -E "stat::number_of_executed_units|stat::peak_rss_mb" "$work/$t.log" | tr '\n' ' '
  echo "in $((SECONDS - start)) s"
done
