#!/usr/bin/env bash
# engines.sh — the runs engine (model.engine=runs) against the per-page
# engine (model.engine=pages, the reference) in one sitting on one machine:
# seconds, peak memory and the ratio of the two, and whether they printed
# the same report. (The default, auto, picks one of them per run.)
#
#   bench/engines.sh [FAULTLINE] [--quick] [--reps N]
#
# 1. seed 1's default matrix (scenarios/seed1-mmap-miss.toml, 32 runs) at -j1;
# 2. its heaviest run, random/baseline of seed 1 (8 MiB read-around over
#    20 GiB in 8 GiB: 59 M folios in and out for 52,428 accesses);
# 3. 1 M random reads of a 16 TiB file in a 64 GiB machine (runs only: the
#    per-page engine's arrays grow with every 2 MiB of the file read), and
#    of a 1 TiB file, where both can run;
# 4. a 16 GiB file read page by page through a mapping in 4 GiB (128 KiB
#    read-around, 4 M accesses, nearly all of them loads through PTEs that
#    fault-around set: the runs engine takes them a stretch at a time);
# 5. with root and loop devices: `faultline compare` of
#    scenarios/fidelity/limit.toml, the kernel's seconds against each
#    engine's.
# --quick skips the default matrix under the per-page engine (about 35 s).
# --reps N runs each measurement N times (default 1) and reports the
# fastest, with the slowest beside it: on a host whose speed drifts from
# one minute to the next (a shared VM), one run's seconds say little.
set -euo pipefail
bin=build/release/faultline
quick=false
reps=1
while [ $# -gt 0 ]; do
  case $1 in
    --quick) quick=true ;;
    --reps)
      reps=${2:-}
      shift
      ;;
    -*)
      echo "engines.sh: unknown option $1" >&2
      exit 2
      ;;
    *) bin=$1 ;;
  esac
  shift
done
if ! [[ $reps =~ ^[1-9][0-9]*$ ]]; then
  echo "engines.sh: --reps wants a count of 1 or more, not '$reps'" >&2
  exit 2
fi
tmp=$(mktemp -d /tmp/faultline-engines.XXXXXX)
trap 'rm -rf "$tmp"' EXIT

# measure NAME ENGINE ARGS...: "seconds peak_MiB" of `faultline run ARGS`,
# its report in $tmp/NAME.ENGINE.csv: the fastest of $reps runs (and with
# more than one, "fastest-slowest" as the seconds), the largest peak.
measure() {
  local name=$1 engine=$2
  shift 2
  : >"$tmp/times"
  for ((i = 0; i < reps; ++i)); do
    /usr/bin/time -f "%e %M" -o "$tmp/time" "$bin" run -q "$@" --set "model.engine=$engine" \
      --format csv -o "$tmp/$name.$engine.csv"
    cat "$tmp/time" >>"$tmp/times"
  done
  awk 'NR == 1 || $1 < lo { lo = $1 } NR == 1 || $1 > hi { hi = $1 } $2 > m { m = $2 }
       END { if (NR > 1) printf "%.2f-%.2f %.0f", lo, hi, m / 1024
             else printf "%.2f %.0f", lo, m / 1024 }' "$tmp/times"
}

# The reports of the two engines, but for the model.engine column.
without_engine() {
  awk -F, 'NR == 1 { for (i = 1; i <= NF; ++i) if ($i == "model.engine") c = i }
           { if (c) $c = ""; print }' OFS=, "$1"
}
same() {
  if cmp -s <(without_engine "$tmp/$1.pages.csv") <(without_engine "$tmp/$1.runs.csv"); then
    echo same
  else
    echo DIFFERENT
  fi
}

row() {  # NAME PAGES RUNS
  local p=($2) r=($3)
  local ratio="-"
  # The ratio of the fastest runs (the part before a "-").
  [ "${p[0]:-}" != "" ] && [ "${p[0]}" != "-" ] &&
    ratio=$(awk -v a="${p[0]%%-*}" -v b="${r[0]%%-*}" 'BEGIN { printf "%.1fx", (b > 0 ? a / b : 0) }')
  printf '%-44s %11s %8s %11s %8s %8s %s\n' "$1" "${p[0]:--}" "${p[1]:--}" "${r[0]}" "${r[1]}" \
    "$ratio" "${4:-}"
}

echo "faultline: $bin; $(nproc) CPUs; $(uname -r); fastest of $reps run(s) each"
printf '%-44s %11s %8s %11s %8s %8s %s\n' run "pages s" "pages MiB" "runs s" "runs MiB" ratio report

if ! $quick; then
  p=$(measure matrix pages -j1)
  r=$(measure matrix runs -j1)
  row "seed 1 default matrix (32 runs, -j1)" "$p" "$r" "$(same matrix)"
fi
heavy=(--only random/baseline --set model.repetitions=1)
p=$(measure heavy pages "${heavy[@]}")
r=$(measure heavy runs "${heavy[@]}")
row "seed 1 random/baseline, seed 1" "$p" "$r" "$(same heavy)"

big=bench/random-reads-64g.toml
for size in 1TiB 16TiB; do
  r=$(measure "big$size" runs "$big" --set "file.size=$size")
  if [ "$size" = 1TiB ]; then
    p=$(measure "big$size" pages "$big" --set "file.size=$size")
    row "1M random reads, $size file, 64 GiB" "$p" "$r" "$(same "big$size")"
  else
    row "1M random reads, $size file, 64 GiB" "- -" "$r"
  fi
done

scan=(scenarios/fidelity/limit.toml --only sequential --set file.size=16GiB
  --set machine.memory_limit=4GiB)
p=$(measure scan pages "${scan[@]}")
r=$(measure scan runs "${scan[@]}")
row "sequential scan, 16 GiB file, 4 GiB" "$p" "$r" "$(same scan)"

if [ "$(id -u)" = 0 ] && losetup -f >/dev/null 2>&1; then
  echo
  echo "faultline compare scenarios/fidelity/limit.toml: the kernel's access loop against the model"
  # Each case's line, then the cases together: the kernel's seconds
  # summed against the model's; auto is the default, which picks an
  # engine per case.
  for engine in pages runs auto; do
    "$bin" compare -q scenarios/fidelity/limit.toml --set "model.engine=$engine" 2>/dev/null |
      awk -v e="$engine" '/ time: / {
        printf "  %-6s %-26s kernel %8.4f s, model %8.4f s %s\n", e, $1, $8, $16, $18
        k += $8; m += $16 }
        END { if (m > 0) printf "  %-6s %-26s kernel %8.4f s, model %8.4f s (%.1fx)\n", e, "all cases", k, m, k / m }'
  done
fi
