#!/usr/bin/env bash
# engines_long.sh — the runs engine against the per-page engine beyond what
# CI runs (tests/engines_test.cc): 10,000 generated scenarios with their
# tracepoints, then the fidelity matrix and the seeds' scenarios, counters
# only (their traces run to gigabytes). A difference prints the seed or the
# file, and the smallest scenario that still shows it.
#   bench/engines_long.sh [BUILD_DIR] [CASES] [FIRST_SEED]
set -euo pipefail
build="${1:-build/release}"
FAULTLINE_ENGINES_CASES="${2:-10000}" FAULTLINE_ENGINES_SEED="${3:-1}" \
  "$build/tests/engines_test" --gtest_filter='Engines.Generated*'
FAULTLINE_ENGINES_TRACE=0 \
  FAULTLINE_ENGINES_FILES="scenarios/fidelity:scenarios/seed1-mmap-miss.toml:scenarios/seed2-vma-refcnt.toml:scenarios/seed3-batch-rss.toml:scenarios/seed4-shmem-fault-around.toml" \
  "$build/tests/engines_test" --gtest_filter='Engines.ScenarioFiles*'
