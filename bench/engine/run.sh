#!/usr/bin/env bash
# Runs bench/engine on hugepages when they can be reserved (root), else on 4 KiB pages.
#   bench/engine/run.sh [BUILD_DIR] [--quick]
set -euo pipefail
cd "$(dirname "$0")/../.."
build=${1:-build}
shift || true
args=("$@")
if [[ $(id -u) -eq 0 ]]; then
    want=1536  # 3 GiB of 2 MiB pages: a 1M-connection table plus mbufs
    have=$(cat /proc/sys/vm/nr_hugepages)
    ((have >= want)) || echo "$want" > /proc/sys/vm/nr_hugepages
    mountpoint -q /dev/hugepages || { mkdir -p /dev/hugepages; mount -t hugetlbfs nodev /dev/hugepages; }
    if (($(cat /proc/sys/vm/nr_hugepages) >= want)); then args+=(--huge); fi
fi
exec "$build/bench/bench_engine" "${args[@]}"
