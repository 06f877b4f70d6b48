#!/usr/bin/env bash
# Regenerates src/core/default_scenario.cc from scenarios/seed1-mmap-miss.toml.
set -euo pipefail
cd "$(dirname "$0")/.."
{
  echo '// default_scenario.cc — generated from scenarios/seed1-mmap-miss.toml by'
  echo '// tools/embed_default.sh; a test checks that the two agree.'
  echo '#include "faultline/scenario.h"'
  echo
  echo 'namespace faultline {'
  echo
  echo 'const char* const kDefaultScenarioToml ='
  printf '    R"toml('
  cat scenarios/seed1-mmap-miss.toml
  echo ')toml";'
  echo
  echo '}  // namespace faultline'
} > src/core/default_scenario.cc
