#!/usr/bin/env bash
# cli_live_test.sh — the probe on this machine's kernel through the command
# line: a probe interrupted by SIGINT or SIGTERM exits with 130 and leaves no
# loop device, mount or workspace behind; a recorded program's model, replay
# and own run agree. Needs root and loop devices; skips itself elsewhere.
# Usage: cli_live_test.sh path/to/faultline path/to/record-test-program
set -u
bin="$1"
program="${2:-}"
. "$(dirname "$0")/../../tests/harness/live.sh"
live_require_root
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# Long enough (a few seconds) that the signal lands inside the run.
printf 'name = "interrupt"\n[file]\nsize = "512MiB"\n[access]\npattern = "sequential"\nfraction = 1.0\n[probe]\nrepetitions = 20\n' >"$tmp/s.toml"

for sig in INT TERM; do
  "$bin" probe -q "$tmp/s.toml" >"$tmp/out" 2>"$tmp/err" &
  pid=$!
  sleep 1.5
  kill -s "$sig" "$pid"
  wait "$pid"
  rc=$?
  left=$(leftovers "$pid")
  if [ "$rc" -eq 130 ] && grep -q "interrupted" "$tmp/err" && [ -z "$left" ]; then
    ok
  else
    bad "SIG$sig: status $rc (want 130), stderr: $(head -c 300 "$tmp/err"), left: $left"
  fi
done

# A recording of a program with known accesses: the model, the replay of the
# recording and the program itself read the same and fault the same.
if [ -n "$program" ] && [ -x "$program" ] && command -v strace >/dev/null; then
  head -c 4194304 /dev/urandom >"$tmp/data.bin"
  for limit in 0 2MiB; do
    if "$bin" record -q -o "$tmp/rt.flr" -- "$program" "$tmp/data.bin" 2>"$tmp/err" &&
      "$bin" compare -q --reps 1 "$tmp/rt.flr" --set machine.memory_limit=$limit --format json \
        -o "$tmp/cmp.json" 2>>"$tmp/err" &&
      grep -q '"pass": true' "$tmp/cmp.json" && grep -q '"program_pass": true' "$tmp/cmp.json"; then
      ok
    else
      bad "recorded program, limit $limit: $(tail -c 400 "$tmp/err")"
      cat "$tmp/cmp.json" 2>/dev/null
    fi
  done
  # A program whose file is gone: exit 6, the file named, before any replay.
  cp "$tmp/data.bin" "$tmp/gone.bin"
  if "$bin" record -q -o "$tmp/gone.flr" -- "$program" "$tmp/gone.bin" 2>/dev/null; then
    rm "$tmp/gone.bin"
    "$bin" compare -q --reps 1 "$tmp/gone.flr" >/dev/null 2>"$tmp/err"
    rc=$?
    if [ "$rc" -eq 6 ] && grep -q "$tmp/gone.bin" "$tmp/err"; then
      ok
    else
      bad "a recorded program's missing file: status $rc (want 6), $(head -c 300 "$tmp/err")"
    fi
  else
    bad "recording $program"
  fi
else
  echo "skipped: a recorded program (no strace or no record-test-program)"
fi

# calibrate traces the kernel's readahead and, with --hold-insertion, holds
# cpu.add_folio_ns at the time per folio it read off the trace; the traced
# run leaves nothing behind (one small workload, so the fit takes seconds).
if [ -n "$live_tracefs" ] || grep -qw tracefs /proc/filesystems; then
  printf 'name = "one"\n[file]\nsize = "64MiB"\n[device]\nread_ahead_kb = 512\n[access]\npattern = "sequential"\nfraction = 1.0\n[probe]\nrepetitions = 2\n[[case]]\nname = "cold"\nset = []\n' >"$tmp/one.toml"
  export TMPDIR="$tmp"
  if "$bin" calibrate -q --hold-insertion "$tmp/one.toml" -o "$tmp/one-profile.toml" >"$tmp/out" 2>"$tmp/err"; then
    per_folio=$(sed -n 's/.*added a folio every \([0-9]*\) ns.*/\1/p' "$tmp/out")
    held=$(sed -n 's/^add_folio_ns = //p' "$tmp/one-profile.toml")
    if [ -n "$per_folio" ] && [ -n "$held" ] &&
      awk -v a="$per_folio" -v b="$held" 'BEGIN { d = a - b; exit !(d < 1 && d > -1) }' &&
      [ -z "$(ls "$tmp" | grep faultline-calibrate)" ] && [ -z "$(all_leftovers)" ]; then
      ok
    else
      bad "calibrate --hold-insertion: traced '$per_folio' ns, held '$held', left: $(ls "$tmp") $(all_leftovers)"
    fi
  else
    bad "calibrate --hold-insertion: $(tail -c 400 "$tmp/err")"
  fi
  unset TMPDIR
else
  echo "skipped: calibrate's traced insertion (no tracefs)"
fi

live_finish
