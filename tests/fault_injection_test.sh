#!/usr/bin/env bash
# fault_injection_test.sh — the probe and the recorder when the machine, not
# the user, fails them. Each case checks the exit status (README, "Exit
# status"), that the message names what failed, and that nothing is left:
# no loop device, mount, memory cgroup or trace instance of the run, no run
# directory, no recorder work directory or half-written recording.
#
# Failures are real ones, made from outside: tools in PATH that fail as
# losetup and mkfs do, a file system too small for the test file, a memory
# cgroup hierarchy or a /sys mounted read-only in a private mount namespace,
# strace refused, a full output file system, programs that crash or are
# killed. Kills at each stage of the probe and of its child come from
# FAULTLINE_PROBE_KILL (src/probe/fault_inject.h).
#
# Needs root and loop devices (the recorder cases need strace); skips
# itself elsewhere. Usage: fault_injection_test.sh FAULTLINE RECORD_TEST_PROGRAM
set -u
bin="$1"
program="${2:-}"
. "$(dirname "$0")/harness/live.sh"
live_require_root
tmp=$(mktemp -d)
root=$live_root  # the probe's workspace
memcg=$live_memcg
cleanup() {
  mountpoint -q "$tmp/full" && umount "$tmp/full"
  rm -rf "$tmp"
}
trap cleanup EXIT

# expect NAME STATUS PATTERN PID: the exit status, the message on stderr and no leftovers.
expect() {
  local name="$1" want="$2" pattern="$3" pid="$4" rc="$5"
  local left
  left=$(leftovers "$pid")
  if [ "$rc" -eq "$want" ] && grep -q -- "$pattern" "$tmp/err" && [ -z "$left" ]; then
    ok
  else
    bad "$name: status $rc (want $want), stderr: $(head -c 300 "$tmp/err") (want /$pattern/), left: $left"
  fi
}

cat >"$tmp/s.toml" <<'EOF'
name = "fault"
[file]
size = "16MiB"
[machine]
memory_limit = "64MiB"
[access]
pattern = "sequential"
fraction = 1.0
[probe]
repetitions = 2
EOF
probe() {  # a small probe with a cgroup and a trace instance; its pid in $pid
  "$bin" probe -q "$tmp/s.toml" --trace-dir "$tmp/traces" "$@" >"$tmp/out" 2>"$tmp/err" &
  pid=$!
  wait "$pid"
}

# --- the machine's tools fail -------------------------------------------------
mkdir -p "$tmp/bin"
real_losetup=$(command -v losetup)
real_mkfs=$(command -v mkfs.ext4)
cat >"$tmp/bin/losetup" <<EOF
#!/bin/sh
case "\$*" in *--find*) echo "losetup: cannot find an unused loop device" >&2; exit 1;; esac
exec $real_losetup "\$@"
EOF
chmod +x "$tmp/bin/losetup"
PATH="$tmp/bin:$PATH" probe
expect "losetup fails" 5 "losetup.*cannot find an unused loop device" "$pid" $?
rm "$tmp/bin/losetup"

printf '#!/bin/sh\necho "mkfs.ext4: Device size reported to be zero." >&2\nexit 1\n' >"$tmp/bin/mkfs.ext4"
chmod +x "$tmp/bin/mkfs.ext4"
PATH="$tmp/bin:$PATH" probe
expect "mkfs fails" 5 "mkfs.ext4.*Device size reported to be zero" "$pid" $?

# A file system of 4 MiB for a 16 MiB test file: ENOSPC while writing it.
printf '#!/bin/sh\nexec %s "$@" 4M\n' "$real_mkfs" >"$tmp/bin/mkfs.ext4"
PATH="$tmp/bin:$PATH" probe
expect "file system full" 5 "write .*/data: No space left on device" "$pid" $?
rm "$tmp/bin/mkfs.ext4"

# --- read-only kernel interfaces (a private mount namespace) ------------------
if command -v unshare >/dev/null && [ -n "$memcg" ]; then
  unshare -m --propagation private sh -c \
    'mount -o remount,bind,ro "$1" && exec "$0" probe -q "$2"' \
    "$bin" "$memcg" "$tmp/s.toml" >"$tmp/out" 2>"$tmp/err" &
  pid=$!
  wait "$pid"
  expect "memory cgroup cannot be created" 5 "faultline-probe-$pid: Read-only file system" "$pid" $?

  unshare -m --propagation private sh -c \
    'mount -o remount,bind,ro /sys && exec "$0" probe -q "$1"' \
    "$bin" "$tmp/s.toml" >"$tmp/out" 2>"$tmp/err" &
  pid=$!
  wait "$pid"
  expect "read-only /sys" 5 "/sys/block/loop.*Read-only file system" "$pid" $?
else
  echo "skipped: read-only cgroup and /sys (no unshare or no memory cgroup)"
fi

# --- the probe's child killed at each of its stages -----------------------------
for point in child-start child-cgroup child-mapped child-touching child-measured; do
  FAULTLINE_PROBE_KILL=$point probe
  expect "child killed at $point" 5 "probe child (repetition 0) killed by signal 9" "$pid" $?
done

# --- the probe itself SIGKILLed at each stage: the next run cleans up ------------
for point in workspace losetup mkfs mount file cgroup trace repetition cleanup; do
  FAULTLINE_PROBE_KILL=$point probe
  rc=$?
  killed=$pid
  left=$(leftovers "$killed")
  probe
  rc2=$?
  left2=$(leftovers "$killed")
  if [ "$rc" -eq 137 ] && [ -n "$left" ] && [ "$rc2" -eq 0 ] && [ -z "$left2" ] &&
    [ -z "$(leftovers "$pid")" ]; then
    ok
  else
    bad "probe killed at $point: status $rc (want 137), left: [$left]; next run status $rc2," \
      "left: [$left2] $(head -c 300 "$tmp/err")"
  fi
done

FAULTLINE_PROBE_KILL=nowhere probe
expect "unknown kill point" 2 "FAULTLINE_PROBE_KILL: unknown point \"nowhere\"" "$pid" $?

# --- a program run by the probe crashes or is killed ---------------------------
kill_hanging_program() {  # SIGKILL to "record_test_program FILE hang" once it runs
  for _ in $(seq 100); do
    pkill -KILL -f "^$program $tmp/data.bin hang" && return
    sleep 0.1
  done
}
if [ -n "$program" ] && [ -x "$program" ]; then
  head -c 1048576 /dev/urandom >"$tmp/data.bin"
  "$bin" probe -q --reps 1 --command "$program $tmp/data.bin crash" --file "$tmp/data.bin" \
    >"$tmp/out" 2>"$tmp/err" &
  pid=$!
  wait "$pid"
  expect "probed program crashes" 6 "exited with status 134" "$pid" $?

  "$bin" probe -q --reps 1 --command "exec $program $tmp/data.bin hang" --file "$tmp/data.bin" \
    >"$tmp/out" 2>"$tmp/err" &
  pid=$!
  kill_hanging_program
  wait "$pid"
  expect "probed program killed" 6 "killed by signal 9" "$pid" $?
fi

# --- the recorder --------------------------------------------------------------
record_ok=""
if [ -n "$program" ] && [ -x "$program" ] && command -v strace >/dev/null &&
  strace -f -o /dev/null true 2>/dev/null; then
  record_ok=1
fi
if [ -n "$record_ok" ]; then
  export TMPDIR="$tmp/tmpdir"
  mkdir -p "$TMPDIR"
  # expect_record NAME STATUS PATTERN RC [kept]: status, message, no work
  # directory or temporary left; with "kept" the recording exists, incomplete.
  expect_record() {
    local name="$1" want="$2" pattern="$3" rc="$4" kept="${5:-}"
    local left
    left=$(ls "$TMPDIR"; ls "$tmp" | grep '\.tmp\.')
    local kept_ok=1
    if [ -n "$kept" ]; then
      "$bin" run -q "$tmp/r.flr" >/dev/null 2>"$tmp/run-err" && kept_ok=0
      grep -q "incomplete.*access.allow_incomplete=true" "$tmp/run-err" || kept_ok=0
      "$bin" run -q "$tmp/r.flr" --set access.allow_incomplete=true >/dev/null 2>&1 || kept_ok=0
    else
      [ -e "$tmp/r.flr" ] && kept_ok=0
    fi
    if [ "$rc" -eq "$want" ] && grep -q -- "$pattern" "$tmp/err" && [ -z "$left" ] &&
      [ "$kept_ok" -eq 1 ]; then
      ok
    else
      bad "record, $name: status $rc (want $want), stderr: $(head -c 400 "$tmp/err")" \
        "(want /$pattern/), left: [$left], recording as wanted: $kept_ok"
    fi
    rm -f "$tmp/r.flr"
  }
  record() { "$bin" record -q -o "$tmp/r.flr" -- "$program" "$tmp/data.bin" "$@" 2>"$tmp/err"; }

  record fail
  expect_record "program fails" 6 "exited with status 3; .* is kept, marked incomplete" $? kept
  record kill
  expect_record "program killed" 6 "was killed by signal 9" $? kept
  record crash
  expect_record "program crashes" 6 "was killed by signal 6" $? kept

  record hang &
  rpid=$!
  kill_hanging_program
  wait "$rpid"
  expect_record "program killed from outside" 6 "was killed by signal 9" $? kept

  # The recorder SIGKILLed: strace and the program die with it; the next
  # record removes its work directory and its half-written recording.
  "$bin" record -q -o "$tmp/r.flr" -- "$program" "$tmp/data.bin" hang 2>"$tmp/err" &
  rpid=$!
  for _ in $(seq 100); do
    pgrep -f "^$program $tmp/data.bin hang" >/dev/null && break
    sleep 0.1
  done
  kill -KILL "$rpid"
  wait "$rpid" 2>/dev/null
  touch "$tmp/r.flr.tmp.$rpid"
  sleep 0.5
  alive=$(pgrep -f "^$program $tmp/data.bin hang")
  left=$(ls "$TMPDIR")
  record
  rc=$?
  if [ -z "$alive" ] && [ -n "$left" ] && [ "$rc" -eq 0 ] && [ -z "$(ls "$TMPDIR")" ] &&
    [ ! -e "$tmp/r.flr.tmp.$rpid" ]; then
    ok
  else
    bad "recorder SIGKILLed: program still running: [$alive], work dir after the kill: [$left]," \
      "next record status $rc, left then: [$(ls "$TMPDIR")] $(ls "$tmp" | grep '\.tmp\.')"
    [ -n "$alive" ] && kill -KILL $alive
  fi
  rm -f "$tmp/r.flr"

  # strace that cannot trace: exit 4 (the machine), no recording.
  real_strace=$(command -v strace)
  printf '#!/bin/sh\ncase "$1" in -V) exec %s -V;; esac\necho "strace: PTRACE_TRACEME: Operation not permitted" >&2\nexit 1\n' \
    "$real_strace" >"$tmp/bin/strace"
  chmod +x "$tmp/bin/strace"
  PATH="$tmp/bin:$PATH" record
  expect_record "strace refused" 4 "traced nothing" $?
  rm "$tmp/bin/strace"

  # No work directory: exit 5 naming TMPDIR.
  TMPDIR="$tmp/no-such-dir" record
  expect_record "TMPDIR missing" 5 "cannot create a directory in $tmp/no-such-dir" $?

  # The recording's file system is full: exit 5, nothing half-written.
  mkdir -p "$tmp/full"
  mount -t tmpfs -o size=64k tmpfs "$tmp/full"
  dd if=/dev/zero of="$tmp/full/fill" bs=4k 2>/dev/null
  "$bin" record -q -o "$tmp/full/r.flr" -- "$program" "$tmp/data.bin" 2>"$tmp/err"
  rc=$?
  if [ "$rc" -eq 5 ] && grep -q "write failed: No space left on device" "$tmp/err" &&
    [ "$(ls "$tmp/full")" = "fill" ] && [ -z "$(ls "$TMPDIR")" ]; then
    ok
  else
    bad "record to a full file system: status $rc (want 5), $(head -c 300 "$tmp/err")," \
      "left: $(ls "$tmp/full" "$TMPDIR")"
  fi
  umount "$tmp/full"
  unset TMPDIR
else
  echo "skipped: the recorder cases (no strace, no ptrace or no record-test-program)"
fi

# Nothing of any run is left.
all=$(all_leftovers)
if [ -z "$all" ]; then ok; else bad "left at the end: $all"; fi

live_finish
