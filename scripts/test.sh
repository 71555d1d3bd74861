#!/usr/bin/env bash
# Installs what the build and tests need (idempotent), then builds and runs the unit and packet
# tests three ways, lints the lines this change touched, and runs e2e against the shipped build:
#   build          RelWithDebInfo, every target: what we ship; e2e runs against it
#   build-release  Release (-O3 -DNDEBUG), tests only: what a packager builds
#   build-asan     Debug with ASan + UBSan (UBSan aborts), tests only
# Every stage prints "stage NAME: Ns"; the end prints each build's ctest counts and fails if
# any stage failed (later stages still run, so one report shows every failure).
#   scripts/test.sh                           all of it
#   XVS_SKIP_E2E=1 scripts/test.sh            no e2e
#   XVS_BUILDS="build build-asan" ...         only these of the three builds (names as above)
#   XVS_TIDY_BASE=<rev> ...                   lint lines changed since <rev> (default below)
#   XVS_BUILD_DIR=dir ...                     the shipped build's dir (others get -release/-asan)
set -uo pipefail
cd "$(dirname "$0")/.."
source scripts/lib/deps.sh
deps_install build test lint || exit 1

jobs=${XVS_JOBS:-$(nproc)}
build=${XVS_BUILD_DIR:-build}
want_builds=${XVS_BUILDS:-build build-release build-asan}
launcher=()
if command -v ccache >/dev/null 2>&1; then
    launcher=(-DCMAKE_C_COMPILER_LAUNCHER=ccache -DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
fi

failed=()
counts=()
t_all=$SECONDS

# cpu_now: sets cpu to the CPU seconds (user + sys) used so far by the processes this shell
# waited for. `times` must run in this shell, not in a $(...) subshell (which has no children).
cpu_file=$(mktemp)
trap 'rm -f "$cpu_file"' EXIT
cpu_now() {
    times >"$cpu_file"
    cpu=$(awk 'NR == 2 { t = 0; for (i = 1; i <= 2; i++) { split($i, a, "m"); t += a[1] * 60 + a[2] }
        printf "%d", t }' "$cpu_file")
}

# stage NAME CMD...: runs CMD and prints its wall time and CPU time (machine-independent: on
# N free cores a stage takes about cpu/N); a failure is recorded, not fatal (the status is
# returned so a test stage can be skipped after its build failed).
stage() {
    local name=$1 t0=$SECONDS c0 rc=0
    cpu_now
    c0=$cpu
    shift
    echo "== $name"
    "$@" || rc=$?
    cpu_now
    local took="$((SECONDS - t0))s (cpu $((cpu - c0))s)"
    if ((rc)); then
        failed+=("$name")
        echo "stage $name: $took FAILED (exit $rc)"
    else
        echo "stage $name: $took"
    fi
    return "$rc"
}

# build_and_test NAME DIR TARGET CMAKE_ARGS... [-- ENV...]: stage NAME builds, test-NAME runs.
build_and_test() {
    local name=$1 dir=$2 target=$3 cm=() envs=()
    shift 3
    while (($#)) && [[ $1 != -- ]]; do cm+=("$1") && shift; done
    (($#)) && shift && envs=("$@")
    if stage "$name" compile "$dir" "$target" "${cm[@]}"; then
        stage "test-$name" unit_packet "$dir" "${envs[@]}"
    else
        counts+=("$dir: not run (build failed)")
    fi
    [[ $name != build ]] || stage tidy tidy_changed
}

# compile DIR TARGET CMAKE_ARGS...: configure DIR and build TARGET (empty: all).
compile() {
    local dir=$1 target=$2
    shift 2
    cmake -S . -B "$dir" -G Ninja "${launcher[@]}" "$@" >/dev/null || return
    cmake --build "$dir" -j "$jobs" ${target:+--target "$target"}
}

# unit_packet DIR [ENV...]: the unit and packet ctest of DIR; records its counts line.
unit_packet() {
    local dir=$1 log rc
    shift
    log="$dir/ctest-unit-packet.log"
    env "$@" ctest --test-dir "$dir" --output-on-failure -j "$jobs" -L 'unit|packet' 2>&1 |
        tee "$log"
    rc=${PIPESTATUS[0]}
    counts+=("$dir: $(grep -E 'tests passed, [0-9]+ tests? failed out of' "$log" | tail -1 ||
        echo "no ctest summary (exit $rc)")")
    return "$rc"
}

# tidy_changed: clang-tidy (.clang-tidy) on the .cpp files changed since the base revision,
# reporting only findings on changed lines (-line-filter), each one an error. Pre-existing code
# in a touched file is left alone: a one-line fix must not inherit a file's backlog. Base:
# XVS_TIDY_BASE, else the merge-base with origin/main (or main) when that is not HEAD itself,
# else HEAD~1. The diff is against the working tree, so uncommitted edits count as changed.
tidy_changed() {
    if ! command -v clang-tidy >/dev/null 2>&1; then
        echo "clang-tidy: not installed, skipped"
        return 0
    fi
    local base=${XVS_TIDY_BASE:-} ref head
    head=$(git rev-parse HEAD 2>/dev/null) || {
        echo "clang-tidy: not a git checkout, skipped"
        return 0
    }
    if [[ -z $base ]]; then
        for ref in origin/main main; do
            git rev-parse -q --verify "$ref^{commit}" >/dev/null || continue
            base=$(git merge-base HEAD "$ref") || base=
            [[ $base == "$head" ]] && base=
            [[ -n $base ]] && break
        done
    fi
    [[ -n $base ]] || base=$(git rev-parse -q --verify 'HEAD~1^{commit}') || {
        echo "clang-tidy: no base revision, skipped"
        return 0
    }
    local files=() f ranges rc=0 n=0
    mapfile -t files < <(git diff --name-only --diff-filter=AMR "$base" -- \
        'src/*.cpp' 'tests/*.cpp' 'bench/*.cpp')
    if ((${#files[@]} == 0)); then
        echo "clang-tidy: no .cpp changed since ${base:0:12}, skipped"
        return 0
    fi
    echo "clang-tidy: ${#files[@]} file(s) changed since ${base:0:12}"
    for f in "${files[@]}"; do
        if ! grep -qF "\"file\": \"$PWD/$f\"" "$build/compile_commands.json"; then
            echo "clang-tidy: $f: not compiled in $build (e.g. a fuzz target), skipped"
            continue
        fi
        # Hunks of the new side as [first,last] line pairs; pure deletions (count 0) dropped.
        ranges=$(git diff -U0 "$base" -- "$f" | sed -nE 's/^@@ [^+]*\+([0-9]+)(,([0-9]+))? @@.*/\1 \3/p' |
            awk '{ c = ($2 == "") ? 1 : $2; if (c > 0) printf "%s[%d,%d]", (n++ ? "," : ""), $1, $1 + c - 1 }')
        [[ -n $ranges ]] || continue
        n=$((n + 1))
        # The compile commands are GCC's: clang must not reject GCC-only flags
        # (-Wno-error=restrict, -ffat-lto-objects). The "N warnings generated" count is of
        # findings outside the changed lines, suppressed; it is dropped to keep the log short.
        clang-tidy -p "$build" --quiet --extra-arg=-Wno-unknown-warning-option \
            --extra-arg=-Wno-ignored-optimization-argument \
            -line-filter="[{\"name\":\"$f\",\"lines\":[$ranges]}]" "$f" 2>&1 |
            grep -vE '^[0-9]+ warnings? (and [0-9]+ errors? )?generated\.$'
        ((PIPESTATUS[0] == 0)) || rc=1
    done
    echo "clang-tidy: $n file(s) linted on their changed lines"
    return "$rc"
}

# Sanitizer runtime settings for build-asan. LeakSanitizer stays on: a leak of ours fails its
# test. tests/lsan.supp says which DPDK-internal allocations are exempt, and why.
asan_env=(
    "ASAN_OPTIONS=detect_leaks=1:strict_string_checks=1:detect_stack_use_after_return=1"
    "UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1"
    "LSAN_OPTIONS=suppressions=$PWD/tests/lsan.supp:print_suppressions=0"
)

for b in $want_builds; do
    case $b in
    build) build_and_test build "$build" "" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DXVS_SANITIZE=OFF ;;
    build-release)
        # XVS_LTO stays at its default (on), exactly as a packager builds: the libraries are then
        # compiled with -flto -ffat-lto-objects, and only LTO code generation broke the ipv4.cpp
        # TTL-word punning (with XVS_LTO=OFF the -O3 tests passed with the bug in). Three packet
        # tests are LTO-linked here for that (tests/CMakeLists.txt); the rest link plain.
        build_and_test build-release "$build-release" xvs_tests -DCMAKE_BUILD_TYPE=Release \
            -DXVS_SANITIZE=OFF -DXVS_LTO=ON
        ;;
    build-asan)
        build_and_test build-asan "$build-asan" xvs_tests -DCMAKE_BUILD_TYPE=Debug \
            -DXVS_SANITIZE=ON -- "${asan_env[@]}"
        ;;
    *) echo "XVS_BUILDS: unknown build '$b' (build, build-release, build-asan)" >&2 && exit 2 ;;
    esac
done

# libFuzzer targets (clang, build-fuzz), XVS_FUZZ_SECONDS each (40 here) over the corpora, as
# many at once as there are cores.
if [[ -z "${XVS_SKIP_FUZZ:-}" ]]; then
    export XVS_FUZZ_SECONDS=${XVS_FUZZ_SECONDS:-40}
    stage fuzz scripts/fuzz.sh || :
fi

e2e_log=$build/e2e.log
# The two PMDs' e2e runs go side by side on two or more cores (XE_JOBS=1: one after the other).
e2e_jobs=${XE_JOBS:-$(( $(nproc) >= 2 ? 2 : 1 ))}
e2e_run() { XE_JOBS=$e2e_jobs tests/e2e/run.sh "$build" 2>&1 | tee "$e2e_log"; return "${PIPESTATUS[0]}"; }
if [[ -z "${XVS_SKIP_E2E:-}" && " $want_builds " == *" build "* && -d tests/e2e ]] &&
    compgen -G "tests/e2e/test_*.sh" >/dev/null; then
    if [[ $(id -u) -ne 0 ]]; then
        echo "e2e: skipped (needs root for network namespaces)"
    else
        rm -f "$e2e_log"
        stage e2e e2e_run || :
    fi
fi

echo "== summary"
passed=0
nfailed=0
for c in "${counts[@]}"; do
    echo "unit+packet $c"
    if [[ $c =~ ([0-9]+)\ tests?\ failed\ out\ of\ ([0-9]+) ]]; then
        passed=$((passed + BASH_REMATCH[2] - BASH_REMATCH[1]))
        nfailed=$((nfailed + BASH_REMATCH[1]))
    fi
done
if [[ -f $e2e_log ]] && e2e_line=$(grep -E '^[0-9]+ passed, [0-9]+ failed' "$e2e_log" | tail -1); then
    echo "e2e: $e2e_line"
    read -r p _ f _ <<<"$e2e_line"
    passed=$((passed + p))
    nfailed=$((nfailed + f))
fi
cpu_now
echo "total: $((SECONDS - t_all))s (cpu ${cpu}s)"
if ((${#failed[@]})); then
    echo "FAILED stages: ${failed[*]}"
    # A failed build, lint or fuzz stage fails no test of its own: count it, so the closing
    # line never reads "0 failed" for a red run.
    ((nfailed > 0)) || nfailed=${#failed[@]}
    echo "$passed passed, $nfailed failed"
    exit 1
fi
echo "all stages passed"
echo "$passed passed, $nfailed failed"
