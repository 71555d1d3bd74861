#!/usr/bin/env bash
# Per-packet instruction, simulated cache-miss and branch-mispredict counts of bench/engine
# rows, from callgrind (--cache-sim, --branch-sim): the stand-in for `perf stat` on machines
# without hardware counters (this VM has none). Simulated, so comparable between builds on
# any machine, but not cycles: the caches are callgrind's model (L1 and last level, sized
# after the host's), and stalls are not counted.
#   bench/engine/profile.sh [BUILD_DIR] ROW...
# ROW: one row's name exactly, as bench_engine's --only takes it ("fullnat tcp established",
# "fullnat tcp established (random)", "new tcp connections (SYN)", "synproxy cookie ACK",
# the yardsticks "bare fullnat on rte_hash" and "bare syn cookie responder", ...);
# a substring would run several rows and measure whichever came first.
# For each row: the caller of process_into with the most calls is the row itself (the
# others are setup); its inclusive counts divided by its packets (calls x 32).
set -euo pipefail
cd "$(dirname "$0")/../.."
build=build
if [[ $# -gt 0 && -d $1 ]]; then
    build=$1
    shift
fi
(($#)) || {
    echo "usage: $0 [BUILD_DIR] ROW..." >&2
    exit 2
}
source scripts/lib/deps.sh
deps_install bench || exit 1
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
printf '%-40s %8s %8s %8s %8s %8s\n' row Ir/pkt D1miss LLmiss Bmiss Dref
for row in "$@"; do
    valgrind --tool=callgrind --cache-sim=yes --branch-sim=yes \
        --callgrind-out-file="$out/cg.out" "$build/bench/bench_engine" --tiny --only "=$row" \
        >/dev/null 2>&1
    # Columns: Ir Dr Dw I1mr D1mr D1mw ILmr DLmr DLmw Bc Bcm Bi Bim, then "< caller (Nx)":
    # process_into's callers in the caller tree, each with its inclusive cost. (Annotating
    # engine_bench.cpp's call lines instead missed the row's call site in some builds, and
    # the setup's site was then taken for the row.)
    callgrind_annotate --tree=caller --inclusive=yes --show-percs=no "$out/cg.out" |
        awk '/^ *[0-9,]+ .*  < .*\(([0-9,]+)x\)/ { callers[++nc] = $0; next }
             /  \*  .*engine_bench\.cpp:.*::process_into\(/ { for (i = 1; i <= nc; i++) print callers[i] }
             { nc = 0 }' |
        awk -v row="$row" '
            { n = $0; sub(/.*\(/, "", n); sub(/x\).*/, "", n); gsub(",", "", n)
              for (i = 1; i <= 13; i++) { v[i] = $i; gsub(",", "", v[i]); if (v[i] == ".") v[i] = 0 }
              if (n + 0 > best) { best = n + 0; for (i = 1; i <= 13; i++) b[i] = v[i] } }
            END {
              if (!best) { printf "%-40s no row of that name (bench_engine --only =NAME)\n", row; exit }
              p = best * 32
              printf "%-40s %8.0f %8.2f %8.3f %8.2f %8.0f\n", row, b[1] / p, (b[5] + b[6]) / p,
                     (b[8] + b[9]) / p, (b[11] + b[13]) / p, (b[2] + b[3]) / p }'
done
echo "per packet: Ir instructions; D1miss L1 data misses (read+write); LLmiss last-level data" \
    "misses; Bmiss mispredicted branches (conditional+indirect); Dref data reads+writes"
