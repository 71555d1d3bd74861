#!/usr/bin/env bash
# xvs demo on a fresh Debian 12 machine (root): installs what it needs, builds, builds a
# network-namespace topology (client, director, two real servers with nginx), runs xvsd with
# a FULLNAT virtual service, sends a few requests and shows what xvsadm reports.
# Everything it creates (namespaces, processes, temp files) is removed on any exit.
#   scripts/demo.sh            XVS_BUILD_DIR=DIR picks the build dir (default build)
set -euo pipefail
cd "$(dirname "$0")/.."

section() { printf '\n\033[1m== %s ==\033[0m\n' "$*"; }

if [[ $(id -u) -ne 0 ]]; then
    echo "scripts/demo.sh needs root (it installs packages and creates network namespaces)." >&2
    exit 1
fi

section "Installing build and test dependencies (Debian packages)"
source scripts/lib/deps.sh
deps_install build test
echo "ok"

section "Building xvs"
build=${XVS_BUILD_DIR:-build}
cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build "$build" -j "$(nproc)" --target xvsd xvsadm
echo "binaries: $build/xvsd $build/xvsadm"

set +e # lib.sh reports failures itself and cleans up through its EXIT trap
XE=xvsdemo$$
source tests/e2e/lib.sh
e2e_init "$build" 2>/dev/null

section "Network namespaces"
topo_up 2 2>/dev/null
cat <<EOF
  $NS_CL    client    10.10.1.2/24 (cl0), default route via 10.10.1.1
  $NS_LB    director  xvsd owns lb-wan (10.10.1.1 and VIP $VIP) and lb-lan
                               (10.10.2.1, local addresses 10.10.2.100-103); no kernel addresses
  $NS_SW    switch    bridge br0 joining lb-lan and the real servers
  $(ns_rs 1)   rs1       10.10.2.2:8080 nginx answering "rs1"
  $(ns_rs 2)   rs2       10.10.2.3:8080 nginx answering "rs2"
EOF
start_rs_http 1
start_rs_http 2

section "xvsd configuration ($XE_TMP/xvs.conf)"
conf=$XE_TMP/xvs.conf
{ config_head; vs_block TCP "$VIP" 80 "1:8080:1 2:8080:2"; } >"$conf"
cat "$conf"

section "Starting xvsd in $NS_LB"
start_xvsd "$conf" 2>/dev/null
echo "xvsd running (pid $XVSD_PID), control socket $XE_SOCK, log $XVSD_LOG"
echo "\$ xvsadm -L -n"
xvsadm_ns -L -n

section "10 requests from the client: curl http://$VIP/ (wrr, weights 1:2)"
for k in $(seq 1 10); do
    printf '  request %2d -> %s\n' "$k" "$(http_get "http://$VIP/" || echo "(failed)")"
done

section "xvsadm -L -n --stats"
xvsadm_ns -L -n --stats
section "xvsadm -L -n -c (first lines)"
xvsadm_ns -L -n -c | head -n 8

section "Done"
echo "Stopping xvsd and removing the namespaces."
stop_xvsd TERM 2>/dev/null
