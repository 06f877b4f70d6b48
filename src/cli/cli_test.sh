#!/usr/bin/env bash
# cli_test.sh — the command line's contract: bad input gets a one-line error
# that names the key or file, exit status 2 and no output file; good input
# gives byte-identical reports. Usage: cli_test.sh path/to/faultline
set -u
bin="$1"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
pass=0
fail=0

check() {  # name, expected status, grep pattern for stderr, command...
  local name="$1" want="$2" pattern="$3"
  shift 3
  "$@" >"$tmp/out" 2>"$tmp/err"
  local rc=$?
  if [ "$rc" -eq "$want" ] && { [ -z "$pattern" ] || grep -q -- "$pattern" "$tmp/err"; }; then
    pass=$((pass + 1))
  else
    fail=$((fail + 1))
    echo "FAIL: $name: status $rc (want $want), stderr: $(head -c 300 "$tmp/err")"
  fi
}

small=(--set file.size=64MiB --set machine.memory=1GiB -q)
check "unknown key" 2 "unknown key 'device.readahead'" "$bin" run --set device.readahead=5 "${small[@]}"
check "bad value" 2 "device.read_ahead_kb: expected" "$bin" run --set device.read_ahead_kb=abc "${small[@]}"
check "size of zero" 2 "file.size: must be greater than zero" "$bin" run --set file.size=0 -q
check "stride beyond the file" 2 "access.stride" "$bin" run --set access.stride=99999999 "${small[@]}"
check "missing scenario" 2 "nope.toml: cannot open" "$bin" run "$tmp/nope.toml"
printf 'name = "x"\n[file\nsize = 1\n' >"$tmp/bad.toml"
check "malformed TOML" 2 "bad.toml:2" "$bin" run "$tmp/bad.toml"
printf 'name = "x"\n[file]\nsise = "1GiB"\n' >"$tmp/key.toml"
check "unknown key in a file" 2 "file.sise" "$bin" run "$tmp/key.toml"
printf 'name = "x"\n[[variant]]\nname = "v"\nset = ["kernel.mmap_miss_p9=true"]\n' >"$tmp/var.toml"
check "unknown key in a variant" 2 "kernel.mmap_miss_p9" "$bin" run "$tmp/var.toml"

# Machine profiles (--machine): keys of the machine only, errors that name the file.
check "missing machine profile" 2 "nomachine.toml: cannot open" "$bin" run --machine "$tmp/nomachine.toml" "${small[@]}"
printf 'name = "m"\n[device]\nread_ahead_kb = 512\n' >"$tmp/m_ra.toml"
check "workload key in a machine profile" 2 "device.read_ahead_kb' is not a key of a machine profile" \
  "$bin" run --machine "$tmp/m_ra.toml" "${small[@]}"
printf 'name = "m"\n[cpu]\nfault_ns = -3\n' >"$tmp/m_neg.toml"
check "negative cost in a machine profile" 2 "cpu.fault_ns" "$bin" run --machine "$tmp/m_neg.toml" "${small[@]}"
printf 'name = "m"\nspeed = 3\n' >"$tmp/m_top.toml"
check "unknown top-level key in a machine profile" 2 "unknown key 'speed'" "$bin" run --machine "$tmp/m_top.toml" "${small[@]}"
printf 'name = "m"\n[smp]\nline_far_ns = -1\n' >"$tmp/m_smp.toml"
check "negative line cost in a machine profile" 2 "smp.line_far_ns" "$bin" run --machine "$tmp/m_smp.toml" "${small[@]}"
check "spread without domains" 2 "access.placement: spread needs machine.cpus and machine.cpus_per_domain" \
  "$bin" run "$(dirname "$0")/../../scenarios/seed2-vma-refcnt.toml" --only threads2/base --set access.placement=spread
check "calibrate takes no --set" 2 "--set" "$bin" calibrate --set device.bandwidth=1 -q
printf 'name = "slow"\n[device]\nbandwidth = "100MiB"\nlatency_us = 2000\n' >"$tmp/m_slow.toml"
"$bin" run --only random/baseline "${small[@]}" --format json -o "$tmp/fast.json"
"$bin" run --only random/baseline "${small[@]}" --machine "$tmp/m_slow.toml" --format json -o "$tmp/slow.json"
python3 - "$tmp/fast.json" "$tmp/slow.json" <<'PY' && pass=$((pass + 1)) || { fail=$((fail + 1)); echo "FAIL: --machine slows the device"; }
import json, sys
def elapsed(p):
    d = json.load(open(p))
    return d["runs"][0]["counters"]["elapsed_s"]
fast, slow = elapsed(sys.argv[1]), elapsed(sys.argv[2])
assert slow > 5 * fast, (fast, slow)
PY

# No partial output on error.
"$bin" run --set file.size=0 -q -o "$tmp/report.json" --format json 2>/dev/null
if [ -e "$tmp/report.json" ]; then
  fail=$((fail + 1)); echo "FAIL: an output file was left after an error"
else
  pass=$((pass + 1))
fi

# Determinism: the same scenario and seed give byte-identical reports, whatever -j.
"$bin" run "${small[@]}" --format json -j1 -o "$tmp/a.json"
"$bin" run "${small[@]}" --format json -j2 -o "$tmp/b.json"
if cmp -s "$tmp/a.json" "$tmp/b.json" && [ -s "$tmp/a.json" ]; then
  pass=$((pass + 1))
else
  fail=$((fail + 1)); echo "FAIL: reports differ between two identical runs"
fi

# Repetitions: a bad count is exit 2 naming the key and leaves no file; --repeat N is
# model.repetitions=N; the table says over which seeds its medians were taken.
for n in 0 1001 x; do
  check "repeat $n" 2 "repeat\|model.repetitions" "$bin" run "${small[@]}" --repeat $n -o "$tmp/rep.json"
  [ -e "$tmp/rep.json" ] && { fail=$((fail + 1)); echo "FAIL: --repeat $n left an output file"; }
done
check "repetitions key" 2 "model.repetitions: must be at least 1" "$bin" run "${small[@]}" --set model.repetitions=0
"$bin" run "${small[@]}" --only random --repeat 3 --format json -j2 -o "$tmp/r1.json"
"$bin" run "${small[@]}" --only random --set model.repetitions=3 --format json -j1 -o "$tmp/r2.json"
if [ -s "$tmp/r1.json" ] && cmp -s "$tmp/r1.json" "$tmp/r2.json" \
  && [ "$(grep -c '"seed":' "$tmp/r1.json")" -eq 12 ]; then
  pass=$((pass + 1))
else
  fail=$((fail + 1)); echo "FAIL: --repeat 3 differs from model.repetitions=3, or lacks a seed's counters"
fi
check "repeat: table" 0 "" "$bin" run "${small[@]}" --only random --repeat 3
grep -q "seeds 1 to 3: medians of 3 runs" "$tmp/out" && grep -q "pgpgin GiB over the seeds" "$tmp/out" \
  && pass=$((pass + 1)) || { fail=$((fail + 1)); echo "FAIL: repeated table lacks its seeds or spread"; }

# Timelines: an interval of zero or a malformed one is exit 2 naming the key, with no file;
# --timeline-dir writes each run's CSV and SVG, the same bytes whatever -j.
for v in 0 0ms x; do
  check "timeline $v" 2 "model.timeline" "$bin" run "${small[@]}" --timeline $v -o "$tmp/tl.json"
  [ -e "$tmp/tl.json" ] && { fail=$((fail + 1)); echo "FAIL: --timeline $v left an output file"; }
done
check "timeline-dir without a timeline" 2 "--timeline-dir: no run has a timeline" \
  "$bin" run "${small[@]}" --timeline-dir "$tmp/tl0"
[ -e "$tmp/tl0" ] && { fail=$((fail + 1)); echo "FAIL: --timeline-dir made a directory after an error"; }
check "timeline of pft" 2 "model.timeline: the concurrent workloads" \
  "$bin" run "$(dirname "$0")/../../scenarios/seed2-vma-refcnt.toml" -q --timeline 10
"$bin" run "${small[@]}" --only random --timeline 50 --timeline-dir "$tmp/tl1" -j1 >"$tmp/tl1.txt"
"$bin" run "${small[@]}" --only random --timeline 50 --timeline-dir "$tmp/tl2" -j2 >/dev/null
if [ -s "$tmp/tl1/random_P2.timeline.csv" ] && [ -s "$tmp/tl1/random_P2.timeline.svg" ] \
  && diff -r "$tmp/tl1" "$tmp/tl2" >/dev/null && [ "$(ls "$tmp/tl1" | wc -l)" -eq 8 ] \
  && head -1 "$tmp/tl1/random_P2.timeline.csv" | grep -q '^accesses,elapsed_s,pgpgin,' \
  && grep -q "random/P2: .* samples, one every 50 accesses" "$tmp/tl1.txt"; then
  pass=$((pass + 1))
else
  fail=$((fail + 1)); echo "FAIL: --timeline-dir files missing, differ with -j, or the table lacks them"
fi

check "invariants on a limit scenario" 0 "" "$bin" run "$(dirname "$0")/../../scenarios/fidelity/limit.toml" -q --set model.invariants=97
check "invariants on tmpfs" 0 "" "$bin" run "$(dirname "$0")/../../scenarios/seed4-shmem-fault-around.toml" -q --set model.invariants=97

# explain: one run's account; a run the scenario lacks, or several, is exit 2 with no file.
check "explain: no such run" 2 "--only: no run named 'nope'" \
  "$bin" explain "${small[@]}" --only nope -o "$tmp/ex.json"
check "explain: which run" 2 "name one with --only" "$bin" explain "${small[@]}" -o "$tmp/ex.json"
[ -e "$tmp/ex.json" ] && { fail=$((fail + 1)); echo "FAIL: explain left an output file after an error"; }
check "explain: text" 0 "" "$bin" explain "${small[@]}" --only random/P2
grep -q "Where the reads went" "$tmp/out" && grep -q "The single change that reduces pgpgin the most" "$tmp/out" \
  && pass=$((pass + 1)) || { fail=$((fail + 1)); echo "FAIL: explain's account lacks its parts"; }
"$bin" explain "${small[@]}" --only random/P2 --format json -j1 -o "$tmp/e1.json"
"$bin" explain "${small[@]}" --only random/P2 --format json -j2 -o "$tmp/e2.json"
if [ -s "$tmp/e1.json" ] && cmp -s "$tmp/e1.json" "$tmp/e2.json" \
  && /usr/bin/env python3 -c 'import json,sys; json.load(open(sys.argv[1]))' "$tmp/e1.json"; then
  pass=$((pass + 1))
else
  fail=$((fail + 1)); echo "FAIL: explain's JSON is not valid or differs with -j"
fi

# The profile tables of docs/model_fidelity.md are what `faultline profiles` prints.
doc="$(dirname "$0")/../../docs/model_fidelity.md"
sed -n '/<!-- faultline profiles: begin -->/,/<!-- faultline profiles: end -->/p' "$doc" | sed '1d;$d' >"$tmp/doc-profiles"
"$bin" profiles >"$tmp/profiles"
if [ -s "$tmp/profiles" ] && cmp -s "$tmp/profiles" "$tmp/doc-profiles"; then
  pass=$((pass + 1))
else
  fail=$((fail + 1)); echo "FAIL: docs/model_fidelity.md's profile tables differ from 'faultline profiles':"
  diff "$tmp/doc-profiles" "$tmp/profiles" | head -20
fi

check "keys" 0 "" "$bin" keys
grep -q "kernel.mmap_miss_p1" "$tmp/out" && pass=$((pass + 1)) || { fail=$((fail + 1)); echo "FAIL: keys lacks kernel.mmap_miss_p1"; }

# read(2) accesses are loads only; a hint the model lacks is named.
check "read method with writes" 2 "access.method" "$bin" run "${small[@]}" --set access.method=read --set access.op=write
check "unknown fadvise" 2 "file.fadvise" "$bin" run "${small[@]}" --set file.fadvise=often

# A malformed access trace: exit status 2, FILE:LINE named, no output file.
printf '0,4096\n# c\n8192,x\n' >"$tmp/bad.trace"
trace=(--set access.pattern=trace --set access.trace="$tmp/bad.trace" --set access.trace_format=offsets)
check "malformed trace" 2 "bad.trace:3:" "$bin" run "${small[@]}" "${trace[@]}" -o "$tmp/trace.json"
if [ -e "$tmp/trace.json" ]; then
  fail=$((fail + 1)); echo "FAIL: an output file was left after a malformed trace"
else
  pass=$((pass + 1))
fi

# faultline sweep: bad --vary or --metric gets exit status 2, an error naming
# the key or metric, and no output file; good input gives identical reports.
sw=(sweep --only random --set file.size=64MiB --set machine.memory=1GiB -q)
check "sweep: unknown key" 2 "unknown key 'access.strid'" "$bin" "${sw[@]}" --vary access.strid=1,2
check "sweep: empty list" 2 "access.stride: empty value list" "$bin" "${sw[@]}" --vary access.stride=
check "sweep: range past 2^64" 2 "END .* is not a value of the key" "$bin" "${sw[@]}" --vary device.read_ahead_kb=128..99999999999999999999999*2
check "sweep: malformed range" 2 "malformed range '1..8'" "$bin" "${sw[@]}" --vary access.stride=1..8
check "sweep: bad value" 2 "device.read_ahead_kb: expected" "$bin" "${sw[@]}" --vary device.read_ahead_kb=128,abc
check "sweep: no --vary" 2 "--vary" "$bin" "${sw[@]}"
check "sweep: unknown metric" 2 "no run reports a counter 'pgpgni'" \
  "$bin" "${sw[@]}" --vary device.read_ahead_kb=128,256 --metric pgpgni -o "$tmp/sw.json" --plot "$tmp/sw.svg"
if [ -e "$tmp/sw.json" ] || [ -e "$tmp/sw.svg" ] || ls "$tmp"/sw.*.tmp.* >/dev/null 2>&1; then
  fail=$((fail + 1)); echo "FAIL: sweep left an output file after an error"
else
  pass=$((pass + 1))
fi
check "sweep: table" 0 "" "$bin" "${sw[@]}" --vary device.read_ahead_kb=128..512*2
if grep -q "device.read_ahead_kb  *baseline  *P1  *P2  *P1+P2" "$tmp/out" && [ "$(grep -c 'GiB$' "$tmp/out")" -eq 3 ]; then
  pass=$((pass + 1))
else
  fail=$((fail + 1)); echo "FAIL: sweep table: $(head -c 400 "$tmp/out")"
fi
for f in json csv; do
  "$bin" "${sw[@]}" --vary device.read_ahead_kb=128..512*2 --format $f -j1 -o "$tmp/a.$f" --plot "$tmp/a.svg"
  "$bin" "${sw[@]}" --vary device.read_ahead_kb=128..512*2 --format $f -j2 -o "$tmp/b.$f" --plot "$tmp/b.svg"
  if [ -s "$tmp/a.$f" ] && cmp -s "$tmp/a.$f" "$tmp/b.$f" && cmp -s "$tmp/a.svg" "$tmp/b.svg"; then
    pass=$((pass + 1))
  else
    fail=$((fail + 1)); echo "FAIL: sweep $f or svg differ between two identical runs"
  fi
done
# 3 values x 4 variants: 12 CSV rows; one polyline per variant; each JSON run names its swept
# value twice, in "sweep" and in "config".
[ "$(wc -l <"$tmp/a.csv")" -eq 13 ] && head -1 "$tmp/a.csv" | grep -q '^case,variant,device.read_ahead_kb,' \
  && [ "$(grep -c '<polyline' "$tmp/a.svg")" -eq 4 ] && grep -q '>P1+P2</text>' "$tmp/a.svg" \
  && [ "$(grep -c '"device.read_ahead_kb": "256"' "$tmp/a.json")" -eq 8 ] \
  && pass=$((pass + 1)) || { fail=$((fail + 1)); echo "FAIL: sweep csv/svg/json shape"; }

# A machine that lacks what the probe needs is not bad input: exit status 4.
# As root, the probe is run as nobody (setpriv) when that user can run the binary.
printf 'name = "x"\n[file]\nsize = "4MiB"\n' >"$tmp/probe.toml"
chmod 755 "$tmp" && chmod 644 "$tmp/probe.toml"
if [ "$(id -u)" -ne 0 ]; then
  check "probe without root" 4 "needs root" "$bin" probe -q "$tmp/probe.toml"
elif setpriv --reuid=65534 --regid=65534 --clear-groups "$bin" --version >/dev/null 2>&1; then
  check "probe without root" 4 "needs root" \
    setpriv --reuid=65534 --regid=65534 --clear-groups "$bin" probe -q "$tmp/probe.toml"
else
  echo "skipped: probe without root (user nobody cannot run $bin)"
fi

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
