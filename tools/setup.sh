#!/usr/bin/env bash
# Installs what faultline needs on a fresh Debian 12 machine (run as root).
# Idempotent: packages already present are left as they are.
set -euo pipefail
packages=(
  cmake ninja-build g++ pkg-config clang-format
  libgtest-dev libgmock-dev libbenchmark-dev
  libcli11-dev libtomlplusplus-dev nlohmann-json3-dev libfmt-dev
  libabsl-dev  # absl::btree_map, the runs engine's ordered maps
  e2fsprogs xfsprogs util-linux strace procps  # procps: pgrep/pkill in tests/fault_injection_test.sh
  git python3 python3-numpy python3-lmdb  # scripts/validate
  python3-dev python3-pybind11 python3-pytest python3-pandas python3-matplotlib  # the Python module
  openmpi-bin libopenmpi-dev bc  # sweeps on MPI (bc: bench/mpi)
  clang libclang-rt-14-dev  # the libFuzzer targets of fuzz/ (tools/fuzz.sh)
  valgrind  # tests/memcheck_test.sh
)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "setup: installing ${missing[*]}"
  if [ "$(id -u)" -ne 0 ]; then
    echo "setup: need root to install packages (sudo $0)" >&2
    exit 2
  fi
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
fi
