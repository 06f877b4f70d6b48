#!/usr/bin/env bash
# git.sh — `git log -p` over a repository whose objects are all in one
# packfile (git mmaps the pack and its index): 3000 generated commits, each
# adding a file of 110 KiB of base64 text and appending lines to one of 40
# log files (deltas), made with git fast-import and `git repack -a -d -f`
# (one thread: the same pack every time); compared without a limit and under
# 1/4 and 1/8 of the pack, read_ahead_kb 128 and 8192.
# Usage: git.sh. Environment: lib.sh.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
need_probe
need_cmd /usr/bin/git /bin/sh

commits=${GIT_COMMITS:-3000}
kib=${GIT_FILE_KIB:-110}
data=$VALIDATE_DATA/git
rec_dir=$VALIDATE_REC
mkdir -p "$data" "$rec_dir"
repo=$data/repo.git

make_repo() {
  local tmp=$repo.tmp
  rm -rf "$tmp"
  git init -q --bare -b main "$tmp"
  "$PY" "$validate_dir/gen.py" git-stream "$commits" "$kib" | git -C "$tmp" fast-import --quiet
  git -C "$tmp" -c pack.threads=1 repack -a -d -f -q
  git -C "$tmp" prune-packed
  rm -rf "$tmp/hooks" "$tmp/logs"
  mv "$tmp" "$repo"
}
make_data "$repo" "git commits=$commits kib=$kib seed=fixed" make_repo
size=$(data_size "$repo"/objects/pack/pack-*.pack)

rec=$rec_dir/git-log.flr
# The data are the pack and its index: git also opens refs/ and
# objects/pack/ as directories, which faultline record would take for data
# files that compare cannot copy (docs/model_fidelity.md, "Real programs").
# sh: only for the redirection (exec: git is the one process).
record "$rec" "$(echo "$repo"/objects/pack/pack-*.pack "$repo"/objects/pack/pack-*.idx)" -- /bin/sh -c "exec /usr/bin/git -C $repo --no-pager log -p >/dev/null"
# Not 1/16 (16 MiB): git's own anonymous memory reaches 17.5 MiB (the
# recording's RssAnon), and a cgroup without swap OOM-kills it.
run_settings git-log git mmap "$rec" "$size" "0:128 0:8192 4:128 8:128 8:8192"
cleanup_data "$data"
