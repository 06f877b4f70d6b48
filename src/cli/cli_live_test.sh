#!/usr/bin/env bash
# cli_live_test.sh — the probe's exit statuses on this machine's kernel: a
# probe interrupted by SIGINT or SIGTERM exits with 130 and leaves no loop
# device, mount or workspace behind. Needs root and loop devices; skips
# itself elsewhere. Usage: cli_live_test.sh path/to/faultline
set -u
bin="$1"
if [ "$(id -u)" -ne 0 ] || [ ! -e /dev/loop-control ]; then
  echo "skipped: needs root and /dev/loop-control"
  exit 0
fi
tmp=$(mktemp -d)
root=/var/tmp/faultline-probe  # the probe's workspace
trap 'rm -rf "$tmp"' EXIT
pass=0
fail=0
# Long enough (a few seconds) that the signal lands inside the run.
printf 'name = "interrupt"\n[file]\nsize = "512MiB"\n[access]\npattern = "sequential"\nfraction = 1.0\n[probe]\nrepetitions = 20\n' >"$tmp/s.toml"

leftovers() {  # what the probe of process $1 left behind
  losetup -a | grep -F "$root/run-$1/"
  grep -F "$root/run-$1/" /proc/mounts
  [ -e "$root/run-$1" ] && echo "$root/run-$1"
}

for sig in INT TERM; do
  "$bin" probe -q "$tmp/s.toml" >"$tmp/out" 2>"$tmp/err" &
  pid=$!
  sleep 1.5
  kill -s "$sig" "$pid"
  wait "$pid"
  rc=$?
  left=$(leftovers "$pid")
  if [ "$rc" -eq 130 ] && grep -q "interrupted" "$tmp/err" && [ -z "$left" ]; then
    pass=$((pass + 1))
  else
    fail=$((fail + 1))
    echo "FAIL: SIG$sig: status $rc (want 130), stderr: $(head -c 300 "$tmp/err"), left: $left"
  fi
done

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
