#!/usr/bin/env bash
# The model's invariants over 10,000 generated scenarios (tests/property_test.cc;
# CI runs 300). A failing seed is printed, shrunk, as a scenario to run.
#   bench/property_long.sh [BUILD_DIR] [CASES] [FIRST_SEED]
set -euo pipefail
build="${1:-build/release}"
FAULTLINE_PROPERTY_CASES="${2:-10000}" FAULTLINE_PROPERTY_SEED="${3:-1}" \
  "$build/tests/property_test" --gtest_filter='Property.GeneratedScenarios*'
