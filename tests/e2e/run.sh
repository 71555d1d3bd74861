#!/usr/bin/env bash
# Runs every tests/e2e/test_*.sh against BUILD_DIR once per PMD (xvsd on net_af_xdp and on
# net_af_packet; XE_PMDS="af_xdp" narrows it; a test marked "# e2e: once", which starts no
# xvsd, runs only with the first PMD, one marked "# e2e: af_xdp" only on af_xdp), each with a
# time limit, and prints
# "PASS name[pmd]" / "FAIL name[pmd]" and finally "N passed, M failed" (CI parses that line).
#   tests/e2e/run.sh [BUILD_DIR=build] [NAME_FILTER]
#   XE_JOBS=2 tests/e2e/run.sh ...     the two PMDs' runs side by side
# Installs nothing (scripts/test.sh does); says what is missing instead.
# Per-test logs go to $XE_LOG_DIR (default: a temp dir, printed); failures print their tail.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
build=$(cd "${1:-build}" 2>/dev/null && pwd) || {
    echo "e2e: build dir '${1:-build}' not found" >&2
    exit 2
}
filter=${2:-}
per_test_limit=${XE_TEST_TIMEOUT:-300}

missing=()
for t in ip ethtool curl socat nginx nft tcpdump timeout sha256sum /usr/bin/python3; do
    command -v "$t" >/dev/null 2>&1 || missing+=("$t")
done
for b in xvsd xvsadm; do [[ -x $build/$b ]] || missing+=("$build/$b (not built)"); done
if [[ $(id -u) -ne 0 ]]; then
    echo "e2e: needs root (network namespaces)" >&2
    exit 2
fi
if ((${#missing[@]})); then
    echo "e2e: missing: ${missing[*]}" >&2
    echo "e2e: scripts/lib/deps.sh 'deps_install test' installs the tools" >&2
    echo "0 passed, 1 failed"
    exit 1
fi

logs=${XE_LOG_DIR:-$(mktemp -d "${TMPDIR:-/tmp}/xvs-e2e.XXXXXX")}
export XE_LOG_DIR=$logs  # tests save artefacts (screenshots) here
mkdir -p "$logs"
echo "e2e: build $build, logs in $logs"
start=$SECONDS
pmds=${XE_PMDS:-af_xdp af_packet}

# run_pmd PMD : every test with xvsd on PMD, in order; a line per test as it ends; the counts
# go to $logs/.result-PMD ("passed failed name...").
run_pmd() {
    local pmd=$1 t name t0 rc passed=0 failed=0 names=()
    for t in "$here"/test_*.sh; do
        name="$(basename "$t" .sh)[$pmd]"
        # A test whose header says "# e2e: once" starts no xvsd, or does not test a PMD (the
        # package test): it runs once, with the first PMD, not per PMD.
        if grep -q '^# e2e: once$' "$t"; then
            [[ $pmd == "${pmds%% *}" ]] || continue
            name=$(basename "$t" .sh)
        fi
        # "# e2e: af_xdp": a test of what only net_af_xdp has (xvs's XDP program).
        grep -q '^# e2e: af_xdp$' "$t" && [[ $pmd != af_xdp ]] && continue
        [[ -n $filter && $name != *$filter* ]] && continue
        t0=$SECONDS
        # --kill-after: a test ignoring SIGTERM still ends; its own trap removes its namespaces.
        XE_PMD=$pmd timeout --kill-after=20 "$per_test_limit" bash "$t" "$build" >"$logs/$name.log" 2>&1
        rc=$?
        if ((rc == 0)); then
            echo "PASS $name ($((SECONDS - t0)) s)"
            passed=$((passed + 1))
        else
            ((rc == 124)) && echo "     $name: timed out after $per_test_limit s" >>"$logs/$name.log"
            # One write, so that a parallel lane's lines do not land inside it.
            # The assertions that failed come first: the test's exit trap prints xvsd's log
            # after them, so the tail alone would show only that.
            printf '%s\n' "FAIL $name ($((SECONDS - t0)) s, exit $rc):" \
                "$(awk '/^FAIL: / { f = 1 } f && /^(\[[0-9:]+ |[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9]T)/ { f = 0 } f' \
                    "$logs/$name.log" | head -n 80 | sed 's/^/    /')" \
                "  last lines of $logs/$name.log:" \
                "$(tail -n 25 "$logs/$name.log" | sed 's/^/    /')"
            failed=$((failed + 1))
            names+=("$name")
        fi
    done
    echo "$passed $failed ${names[*]}" >"$logs/.result-$pmd"
}

# XE_JOBS=2 runs the PMDs side by side (each test has its own namespaces, DPDK file prefix and
# socket, so the lanes share nothing but the CPUs); default one after the other.
lanes=${XE_JOBS:-1}
if ((lanes > 1)); then
    for pmd in $pmds; do run_pmd "$pmd" & done
    wait
else
    for pmd in $pmds; do run_pmd "$pmd"; done
fi

passed=0
failed=0
failed_names=()
for pmd in $pmds; do
    read -r p f n <"$logs/.result-$pmd" || { p=0 f=1 n="lane-$pmd-died"; }
    passed=$((passed + p))
    failed=$((failed + f))
    [[ -n $n ]] && failed_names+=($n)
done
echo "e2e: $((SECONDS - start)) s${failed_names:+, failed: ${failed_names[*]}}"
echo "$passed passed, $failed failed"
((failed == 0))
