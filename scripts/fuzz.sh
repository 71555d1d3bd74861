#!/usr/bin/env bash
# Builds the libFuzzer targets (tests/fuzz/*_fuzz.cpp) with clang, ASan and UBSan
# (-fno-sanitize-recover: UBSan aborts) in build-fuzz/, and runs each for a bounded time over
# its committed corpus (tests/fuzz/corpus/<target>/, read-only: new inputs go to a scratch
# directory). Fails on any crash, leak, timeout or invariant violation; prints executions and
# coverage (cov: edges, ft: features) per target.
#   scripts/fuzz.sh                        every target, XVS_FUZZ_SECONDS (default 60) each
#   XVS_FUZZ_SECONDS=1800 scripts/fuzz.sh pipeline_fuzz    one target, 30 minutes
# Env: XVS_FUZZ_BUILD_DIR (build-fuzz), XVS_FUZZ_OUT (scratch corpora and crash files,
# default $build/fuzz-out), XVS_FUZZ_JOBS (build parallelism, default 2), XVS_FUZZ_PARALLEL
# (targets run at once, default nproc).
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib/deps.sh
deps_install build fuzz

seconds=${XVS_FUZZ_SECONDS:-60}
build=${XVS_FUZZ_BUILD_DIR:-build-fuzz}
out=${XVS_FUZZ_OUT:-$build/fuzz-out}
jobs=${XVS_FUZZ_JOBS:-2}

if (($#)); then
    targets=("$@")
else
    targets=()
    for src in tests/fuzz/*_fuzz.cpp; do targets+=("$(basename "$src" .cpp)"); done
fi

t0=$SECONDS
launcher=()
command -v ccache >/dev/null && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_C_COMPILER_LAUNCHER=ccache)
CC=clang CXX=clang++ cmake -S . -B "$build" -G Ninja -DXVS_FUZZ=ON \
    -DCMAKE_BUILD_TYPE=RelWithDebInfo "${launcher[@]}" >/dev/null
cmake --build "$build" -j "$jobs" --target "${targets[@]}"
echo "fuzz: build took $((SECONDS - t0)) s"

mkdir -p "$out"

# run_target T: runs T for $seconds; writes its one-line result to $out/T/result and, on a
# failure, the log's tail to $out/T/failure. Targets run $parallel at a time (each is one
# process on one core), so CI spends seconds*targets/parallel, not seconds*targets.
run_target() {
    local t=$1 bin="$build/tests/$1" seeds="tests/fuzz/corpus/$1" work="$out/$1" t1=$SECONDS rc=0
    rm -rf "$work/artifacts" "$work/result" "$work/failure"
    mkdir -p "$work/corpus" "$work/artifacts"
    local args=(-max_total_time="$seconds" -timeout=30 -rss_limit_mb=4096 -print_final_stats=1
        -artifact_prefix="$work/artifacts/")
    [[ -f "tests/fuzz/$t.dict" ]] && args+=(-dict="tests/fuzz/$t.dict")
    [[ $t == pipeline_fuzz ]] && args+=(-max_len=8192)
    local dirs=("$work/corpus")
    [[ -d $seeds ]] && dirs+=("$seeds")
    local log="$work/log.txt"
    echo "fuzz: $t for ${seconds}s (log $log)"
    # Quiet EAL and ASan's DPDK noise; leaks of the code under test are still reported.
    "$bin" "${args[@]}" "${dirs[@]}" >"$log" 2>&1 || rc=$?
    # The last status line: "#N  REDUCE|pulse|DONE cov: C ft: F corp: ... exec/s: E".
    local last execs rate cov ft
    last=$(grep -E '^#[0-9]+' "$log" | tail -1 || true)
    execs=$(grep -oE '^stat::number_of_executed_units: *[0-9]+' "$log" | grep -oE '[0-9]+$' || true)
    rate=$(grep -oE '^stat::average_exec_per_sec: *[0-9]+' "$log" | grep -oE '[0-9]+$' || true)
    cov=$(grep -oE 'cov: [0-9]+' <<<"$last" | tail -1 || true)
    ft=$(grep -oE 'ft: [0-9]+' <<<"$last" | tail -1 || true)
    echo "$t: ${execs:-?} execs (${rate:-?}/s) ${cov:-cov: ?} ${ft:-ft: ?} in $((SECONDS - t1)) s, exit $rc" \
        >"$work/result"
    echo "fuzz: $(cat "$work/result")"
    if ((rc != 0)); then
        { echo "---- $t failed; tail of $log:"; tail -60 "$log"; ls "$work/artifacts"; } \
            >"$work/failure" 2>&1
    fi
}

parallel=${XVS_FUZZ_PARALLEL:-$(nproc)}
running=0
for t in "${targets[@]}"; do
    if ((running >= parallel)); then
        wait -n || :
        running=$((running - 1))
    fi
    run_target "$t" &
    running=$((running + 1))
done
wait

failed=()
summary=()
for t in "${targets[@]}"; do
    summary+=("$(cat "$out/$t/result" 2>/dev/null || echo "$t: no result (the runner died)")")
    if [[ -f $out/$t/failure || ! -f $out/$t/result ]]; then
        failed+=("$t")
        cat "$out/$t/failure" >&2 2>/dev/null || :
    fi
done

echo "fuzz summary ($seconds s per target, $((SECONDS - t0)) s in all):"
printf '  %s\n' "${summary[@]}"
if ((${#failed[@]})); then
    echo "fuzz: FAILED: ${failed[*]} (reproduce: $build/tests/<target> <artifact>)" >&2
    exit 1
fi
