#!/usr/bin/env bash
# big_files.sh — what a file's size costs the model: the seconds and peak
# memory (RSS) of one run of random reads over files of 1 GiB to 15 TiB
# in a 64 GiB machine, for a build, and for a second build side by side
# when one is given.
#
#   bench/big_files.sh [FAULTLINE] [OTHER_FAULTLINE] [ACCESSES]
#
# Defaults: build/release/faultline, none, 1000 accesses.
set -euo pipefail
bin="${1:-build/release/faultline}"
other="${2:-}"
count="${3:-1000}"
tmp=$(mktemp -d /tmp/faultline-big.XXXXXX)
trap 'rm -rf "$tmp"' EXIT

# measure BIN SIZE: "seconds peak_MB" of one run, or "refused"
measure() {
  if /usr/bin/time -f "%e %M" -o "$tmp/time" "$1" run -q bench/random-reads-64g.toml \
    --set "file.size=$2" --set "access.count=$count" -o "$tmp/out.txt" 2>"$tmp/err"; then
    awk '{ printf "%.2f s %.0f MB", $1, $2 / 1024 }' "$tmp/time"
  else
    echo "refused: $(head -c 80 "$tmp/err")"
  fi
}

printf '%-8s %-10s %-24s %s\n' size accesses "$bin" "${other:-}"
for size in 1GiB 64GiB 1TiB 15TiB; do
  # A build with a dense page-cache array needs 13 bytes per page of the
  # file (50 GB for 15 TiB): the other build runs up to 1 TiB.
  printf '%-8s %-10s %-24s %s\n' "$size" "$count" "$(measure "$bin" "$size")" \
    "$([ -n "$other" ] && [ "$size" != 15TiB ] && measure "$other" "$size")"
done
