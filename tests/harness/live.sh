# live.sh — what the live shell tests share (sourced, not run): the skip on
# machines without root or loop devices, the pass and fail counts, and the
# list of what a probe left behind.
#
#   . tests/harness/live.sh   # then: live_require_root; ...; ok; bad "why"; live_finish

# The probe's workspace; each run has run-PID under it.
live_root=/var/tmp/faultline-probe
pass=0
fail=0

# Exits 0 with a "skipped" line unless this is root with loop devices.
live_require_root() {
  if [ "$(id -u)" -ne 0 ] || [ ! -e /dev/loop-control ]; then
    echo "skipped: needs root and /dev/loop-control"
    exit 0
  fi
}

ok() { pass=$((pass + 1)); }
bad() {
  fail=$((fail + 1))
  echo "FAIL: $*"
}

# The memory cgroup hierarchy the probe uses (v1 memory controller, else
# cgroup2) and tracefs, or empty.
live_memcg=$(awk '$3 == "cgroup" && $4 ~ /(^|,)memory(,|$)/ { print $2; exit }' /proc/self/mounts)
[ -z "$live_memcg" ] && live_memcg=$(awk '$3 == "cgroup2" { print $2; exit }' /proc/self/mounts)
live_tracefs=$(awk '$3 == "tracefs" { print $2; exit }' /proc/self/mounts)

# What the probe of process $1 left behind, one line each; empty if nothing.
leftovers() {
  losetup -a | grep -F "$live_root/run-$1/"
  grep -F "$live_root/run-$1/" /proc/mounts
  [ -e "$live_root/run-$1" ] && echo "run dir $live_root/run-$1"
  [ -n "$live_memcg" ] && [ -e "$live_memcg/faultline-probe-$1" ] && echo "cgroup faultline-probe-$1"
  [ -n "$live_tracefs" ] && [ -e "$live_tracefs/instances/faultline-$1" ] && echo "trace instance faultline-$1"
}

# What any probe left behind.
all_leftovers() {
  losetup -a | grep -F "$live_root/"
  grep -F "$live_root/" /proc/mounts
  [ -n "$live_memcg" ] && ls "$live_memcg" | grep '^faultline-probe-'
  [ -n "$live_tracefs" ] && ls "$live_tracefs/instances" 2>/dev/null | grep '^faultline-'
}

# Prints the counts; the status of the test.
live_finish() {
  echo "$pass passed, $fail failed"
  [ "$fail" -eq 0 ]
}
