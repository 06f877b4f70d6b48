# shellcheck shell=bash
# lib.sh — shared by the scripts of scripts/validate (sourced, not run).
#
# Environment (all optional):
#   FAULTLINE       the faultline binary (default: build/release/faultline of this repository)
#   VALIDATE_DATA   where data sets and recordings are made (default /var/tmp/faultline-validate)
#   VALIDATE_OUT    where each case's compare JSON goes (default $VALIDATE_DATA/results)
#   VALIDATE_REC    where the recordings go (default $VALIDATE_DATA/recordings)
#   VALIDATE_REPS   repetitions of the replay and of the program per case (default 3)
#   VALIDATE_FORCE  1: make the data set and the recording again even if present
#   VALIDATE_KEEP   0: delete the data set (not the results) when the script ends
#   VALIDATE_RECORD_OPTS  more options of faultline record (e.g. --epoch-ms 5)
#   VALIDATE_SETTINGS     the settings to compare, instead of a script's own: words
#                   DIV:RA, the limit 1/DIV of the data (0: no limit), read_ahead_kb RA
#
# A script sources this, calls need_*, make_data and record, then
#   run_settings PREFIX PROGRAM ACCESS RECORDING DATA_BYTES "DIV:RA ..."
# (or case_run PREFIX PROGRAM ACCESS LIMIT_BYTES READ_AHEAD_KB RECORDING [DATA_BYTES]).
# Recordings go to $VALIDATE_REC, data sets to $VALIDATE_DATA/NAME.

validate_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo_root=$(cd "$validate_dir/../.." && pwd)
FAULTLINE=${FAULTLINE:-$repo_root/build/release/faultline}
VALIDATE_DATA=${VALIDATE_DATA:-/var/tmp/faultline-validate}
VALIDATE_OUT=${VALIDATE_OUT:-$VALIDATE_DATA/results}
VALIDATE_REC=${VALIDATE_REC:-$VALIDATE_DATA/recordings}
VALIDATE_REPS=${VALIDATE_REPS:-3}
VALIDATE_FORCE=${VALIDATE_FORCE:-0}
VALIDATE_KEEP=${VALIDATE_KEEP:-1}
PY=/usr/bin/python3  # Debian's python, which has numpy, lmdb and sqlite3

die() {
  echo "$(basename "$0"): $*" >&2
  exit 2
}

log() { echo "[$(date +%H:%M:%S)] $(basename "$0" .sh): $*" >&2; }

need_probe() {  # what faultline record and compare need
  [ "$(id -u)" -eq 0 ] || die "needs root (the probe makes loop devices, mounts and cgroups)"
  [ -e /dev/loop-control ] || die "needs /dev/loop-control (loop devices)"
  [ -x "$FAULTLINE" ] || die "no faultline binary at $FAULTLINE (build it, or set FAULTLINE=)"
  [ -f "$(dirname "$FAULTLINE")/libfaultline_preload.so" ] ||
    die "no libfaultline_preload.so next to $FAULTLINE"
  command -v strace >/dev/null || die "needs strace (faultline record runs it)"
}

need_cmd() {  # need_cmd PROGRAM...: each must be on PATH or an absolute path
  local c
  for c in "$@"; do
    command -v "$c" >/dev/null || die "needs $c (install it: bash tools/setup.sh)"
  done
}

need_py_module() {  # need_py_module MODULE DEBIAN_PACKAGE
  "$PY" -c "import $1" 2>/dev/null || die "needs $PY with the $1 module (apt-get install $2)"
}

# make_data TARGET STAMP_TEXT COMMAND...: runs COMMAND to make TARGET unless
# TARGET exists and was made by the same STAMP_TEXT (the generator's arguments).
make_data() {
  local target=$1 stamp=$2
  shift 2
  if [ "$VALIDATE_FORCE" != 1 ] && [ -e "$target" ] && [ -f "$target.stamp" ] &&
    [ "$(cat "$target.stamp")" = "$stamp" ]; then
    log "data $target present"
    return 0
  fi
  rm -rf "$target" "$target.stamp" "$target.tmp"
  log "making $target ($stamp)"
  "$@"
  [ -e "$target" ] || die "making $target failed"
  echo "$stamp" >"$target.stamp"
}

# record REC "DATA..." -- COMMAND...: records COMMAND's accesses to the files
# under the DATA paths (directories or files; the program's other files are
# not data) unless REC exists, is newer than its data and was made by the
# same command. The program runs in $VALIDATE_DATA with its output in
# REC.out: not /dev/null, which some programs notice (GNU grep stops at the
# first match when its output is /dev/null) and compare's own run of the
# program does not give it.
record() {
  local rec=$1 data=$2
  shift 3
  local cmd="${VALIDATE_RECORD_OPTS:+$VALIDATE_RECORD_OPTS }--data $data -- $*" d args=()
  for d in $data; do args+=(--data "$d"); done
  # shellcheck disable=SC2206
  [ -z "${VALIDATE_RECORD_OPTS:-}" ] || args+=($VALIDATE_RECORD_OPTS)
  # shellcheck disable=SC2086
  if [ "$VALIDATE_FORCE" != 1 ] && [ -f "$rec" ] && [ -f "$rec.cmd" ] &&
    [ "$(cat "$rec.cmd")" = "$cmd" ] &&
    [ -z "$(find $data -newer "$rec" -type f ! -name '*.stamp' -print -quit)" ]; then
    log "recording $rec present"
    return 0
  fi
  rm -f "$rec" "$rec.cmd"
  log "recording: $cmd"
  local t0=$SECONDS
  (cd "$VALIDATE_DATA" && "$FAULTLINE" record -q "${args[@]}" -o "$rec" -- "$@" >"$rec.out") ||
    die "faultline record failed (status $?): $cmd"
  echo "$cmd" >"$rec.cmd"
  log "recorded in $((SECONDS - t0)) s: $("$FAULTLINE" trace show "$rec" --header | sed -n 2p | sed 's/^# //')"
}

# case_run PREFIX PROGRAM ACCESS LIMIT_BYTES READ_AHEAD_KB REC [DATA_BYTES]:
# faultline compare of REC under a cgroup limit (0: none) and read_ahead_kb,
# written to $VALIDATE_OUT/NAME.json with NAME.meta.json beside it, NAME
# being PREFIX-LIMIT-raREAD_AHEAD_KB (LIMIT: nolimit or NMiB).
case_run() {
  local prefix=$1 program=$2 access=$3 limit=$4 ra=$5 rec=$6 data_bytes=${7:-0}
  mkdir -p "$VALIDATE_OUT"
  local limit_set=0 name
  [ "$limit" != 0 ] && limit_set="$((limit / 1048576))MiB"
  name="$prefix-$([ "$limit" = 0 ] && echo nolimit || echo "$limit_set")-ra$ra"
  log "case $name: limit $limit_set, read_ahead_kb $ra"
  local t0=$SECONDS
  rm -f "$VALIDATE_OUT/$name.json"
  "$FAULTLINE" compare -q --reps "$VALIDATE_REPS" "$rec" \
    --set machine.memory_limit="$limit_set" --set device.read_ahead_kb="$ra" \
    --format json -o "$VALIDATE_OUT/$name.json" >"$VALIDATE_OUT/$name.log" 2>&1 ||
    die "faultline compare failed (status $?) for $name: $(tail -3 "$VALIDATE_OUT/$name.log")"
  cat >"$VALIDATE_OUT/$name.meta.json" <<EOF
{"case": "$name", "program": "$program", "access": "$access", "limit_bytes": $limit,
 "read_ahead_kb": $ra, "data_bytes": $data_bytes, "recording": "$rec",
 "events": "$("$FAULTLINE" trace show "$rec" --header | sed -n 2p | sed 's/^# //')",
 "reps": $VALIDATE_REPS, "seconds": $((SECONDS - t0))}
EOF
}

mib() { echo $(($1 * 1048576)); }

# The size in bytes of the files under a directory (the data set).
data_size() { du -sb --apparent-size "$@" | awk '{s += $1} END {print s}'; }

# A limit near a fraction of the data, in whole MiB: frac_limit BYTES DIVISOR
frac_limit() { echo $((($1 / $2 + 1048575) / 1048576 * 1048576)); }

# run_settings PREFIX PROGRAM ACCESS REC SIZE "DIV:RA ...": case_run for
# each setting (VALIDATE_SETTINGS, when set, instead of the list given).
run_settings() {
  local prefix=$1 program=$2 access=$3 rec=$4 size=$5 list=${VALIDATE_SETTINGS:-$6} s div ra limit
  for s in $list; do
    div=${s%%:*} ra=${s##*:}
    [[ "$div" =~ ^[0-9]+$ && "$ra" =~ ^[0-9]+$ ]] || die "bad setting '$s' (DIV:READ_AHEAD_KB)"
    limit=0
    [ "$div" = 0 ] || limit=$(frac_limit "$size" "$div")
    case_run "$prefix" "$program" "$access" "$limit" "$ra" "$rec" "$size"
  done
}

cleanup_data() {  # cleanup_data DIR: with VALIDATE_KEEP=0, the data set goes
  if [ "$VALIDATE_KEEP" = 0 ]; then
    log "removing $1"
    rm -rf "$1"
  fi
}
