#!/usr/bin/env bash
# Installs what the build and tests need (idempotent), configures, builds and runs every test.
#   scripts/test.sh            all tests (unit, packet, e2e when root)
#   XVS_SKIP_E2E=1 scripts/test.sh   unit and packet only
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib/deps.sh
deps_install build test

build=${XVS_BUILD_DIR:-build}
cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build "$build" -j "$(nproc)"

ctest --test-dir "$build" --output-on-failure -j "$(nproc)" -L 'unit|packet'
[[ -n "${XVS_SKIP_FUZZ:-}" ]] || scripts/fuzz.sh  # libFuzzer targets, XVS_FUZZ_SECONDS each (60)

if [[ -z "${XVS_SKIP_E2E:-}" && -d tests/e2e ]] && compgen -G "tests/e2e/test_*.sh" >/dev/null; then
    if [[ $(id -u) -ne 0 ]]; then
        echo "e2e: skipped (needs root for network namespaces)"
    else
        tests/e2e/run.sh "$build"
    fi
fi
