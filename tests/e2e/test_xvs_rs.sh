#!/usr/bin/env bash
# e2e: once
# xvs-rs on a TUN-mode real server whose kernel has no ipip/fou: `xvs-rs sysctl` puts the VIP
# on lo and sets arp_ignore/arp_announce/rp_filter; `xvs-rs decap` attaches the XDP
# decapsulator to the RS's veth. From the other namespace (standing in for the director)
# scapy sends UDP datagrams and TCP SYNs to the VIP inside IPIP, GUE v0 and GUE v1: the UDP
# echo bound to the VIP gets each payload and answers, the TCP listener on the VIP answers each
# SYN, both straight from the VIP; an IPIP packet to another outer address is not decapsulated;
# `xvs-rs stats` counts exactly that; before decap is attached nothing is answered. Also: a
# foreign XDP program is refused, --detach detaches.
# Needs no xvsd ("e2e: once" above: run.sh runs it for one PMD only).
source "$(dirname "$0")/lib.sh"
XE_TEST=$(basename "${0%.sh}")
BUILD=$(cd "${1:-build}" 2>/dev/null && pwd) || fail "build dir '${1:-build}' not found"
[[ $(id -u) -eq 0 ]] || fail "needs root (network namespaces, BPF)"
[[ -x $BUILD/xvs-rs ]] || fail "$BUILD/xvs-rs not built"
need_tools ip nsenter mount umount socat "$XE_PY"
log "run id $XE, temp $XE_TMP"

NS_DIR=$XE-dir # the director's side: sends the tunnelled packets, sees the direct replies
NS_RS=$XE-rs
DIR_IP=10.10.5.1
RS_IP=10.10.5.2
WRONG_RS=10.10.5.3 # on the RS's link, but not an address the RS decapsulates for
TUN_CLIENT=10.10.6.2 # the client address inside the tunnel (behind the director)
TUN_VIP=10.10.9.100
GUE_PORT=6080
BPFFS=$XE_TMP/bpffs # our own BPF filesystem: the pins vanish with it, nothing shared is touched

# The pins live on a mount in this (host) mount namespace; `ip netns exec` would remount /sys
# and hide it, so xvs-rs's BPF commands enter only the network namespace.
rs_bpf() { nsenter --net="/run/netns/$NS_RS" "$BUILD/xvs-rs" "$@" --bpffs "$BPFFS"; }
rs_cleanup() {
    mountpoint -q "$BPFFS" 2>/dev/null && umount "$BPFFS"
    return 0
}
trap 'rc=$?; rs_cleanup; (exit $rc); cleanup' EXIT

add_ns "$NS_DIR"
add_ns "$NS_RS"
ip link add dir0 netns "$NS_DIR" type veth peer name rs0 netns "$NS_RS" || fail "veth"
ip -n "$NS_DIR" addr add "$DIR_IP/24" dev dir0
ip -n "$NS_DIR" addr add "$TUN_CLIENT/32" dev lo
ip -n "$NS_DIR" link set dir0 up
ip -n "$NS_RS" addr add "$RS_IP/24" dev rs0
ip -n "$NS_RS" link set rs0 up
ip -n "$NS_RS" route add default via "$DIR_IP"
no_offloads "$NS_DIR" dir0
no_offloads "$NS_RS" rs0
# Start from what a distribution ships, so `xvs-rs sysctl` has something to change.
in_ns "$NS_RS" sysctl -qw net.ipv4.conf.all.rp_filter=1 net.ipv4.conf.rs0.rp_filter=1

# ---- sysctl ----
out=$(in_ns "$NS_RS" "$BUILD/xvs-rs" sysctl --vip "$TUN_VIP" --dev rs0 --dry-run) ||
    fail "xvs-rs sysctl --dry-run: $out"
echo "$out" >&2
assert_contains "$out" "would add $TUN_VIP/32 to lo" "dry run names the VIP"
assert_contains "$out" "would set net.ipv4.conf.all.arp_ignore = 1 (was 0)" "dry run names arp_ignore"
assert_eq 0 "$(in_ns "$NS_RS" sysctl -n net.ipv4.conf.all.arp_ignore)" "arp_ignore untouched by --dry-run"
assert_not_contains "$(ip -n "$NS_RS" -4 addr show dev lo)" "$TUN_VIP" "no VIP on lo after --dry-run"
out=$(in_ns "$NS_RS" "$BUILD/xvs-rs" sysctl --vip "$TUN_VIP" --dev rs0) || fail "xvs-rs sysctl: $out"
echo "$out" >&2
assert_contains "$out" "added $TUN_VIP/32 to lo" "sysctl reports the VIP added"
assert_contains "$out" "net.ipv4.conf.rs0.rp_filter = 0 (was 1)" "sysctl reports rp_filter changed"
assert_contains "$(ip -n "$NS_RS" -4 addr show dev lo)" "inet $TUN_VIP/32" "VIP on lo"
for k in all.arp_ignore=1 lo.arp_ignore=1 rs0.arp_ignore=1 all.arp_announce=2 lo.arp_announce=2 \
    rs0.arp_announce=2 all.rp_filter=0 rs0.rp_filter=0; do
    assert_eq "${k#*=}" "$(in_ns "$NS_RS" sysctl -n "net.ipv4.conf.${k%=*}")" "net.ipv4.conf.${k%=*}"
done
out=$(in_ns "$NS_RS" "$BUILD/xvs-rs" sysctl --vip "$TUN_VIP" --dev rs0) || fail "xvs-rs sysctl again: $out"
assert_contains "$out" "lo: $TUN_VIP/32 (already)" "second run: VIP already there"
assert_not_contains "$out" "(was" "second run changes nothing"

# ---- the listeners on the VIP; without the decapsulator the tunnelled packets go unanswered ----
bg_ns "$NS_RS" "$XE_TMP/udp_echo.out" "$XE_PY" "$XE_LIB_DIR/udp_echo.py" "$TUN_VIP" 5353 "vip "
bg_ns "$NS_RS" "$XE_TMP/tcp.out" socat "TCP4-LISTEN:8080,bind=$TUN_VIP,reuseaddr,fork" PIPE
wait_until 10 bash -c "ip netns exec '$NS_RS' ss -Huln 'sport = :5353' | grep -q '$TUN_VIP'" ||
    fail "UDP echo on $TUN_VIP:5353 did not start"
wait_until 10 bash -c "ip netns exec '$NS_RS' ss -Hltn 'sport = :8080' | grep -q '$TUN_VIP'" ||
    fail "TCP listener on $TUN_VIP:8080 did not start"

rs_mac=$(ip -n "$NS_RS" -br link show rs0 | awk '{ print $3 }')
tunnel_traffic() {
    in_ns "$NS_DIR" timeout 30 "$XE_PY" "$XE_LIB_DIR/xvs_rs_client.py" dir0 "$rs_mac" \
        "$DIR_IP" "$RS_IP" "$TUN_CLIENT" "$TUN_VIP" 5353 8080 "$GUE_PORT" "$WRONG_RS"
}
res=$(tunnel_traffic) || fail "xvs_rs_client.py failed: $res"
assert_eq "" "$res" "no answer to IPIP/GUE before xvs-rs decap (this kernel has no ipip/fou)"

# ---- decap ----
mkdir -p "$BPFFS"
mount -t bpf bpf "$BPFFS" || fail "mount -t bpf on $BPFFS"
out=$(rs_bpf decap --dev rs0 --gue-port "$GUE_PORT") || fail "xvs-rs decap: $out"
echo "$out" >&2
assert_contains "$out" "for $RS_IP" "decap defaults to the device's address"
assert_contains "$(ip -n "$NS_RS" link show rs0)" "prog/xdp" "XDP program on rs0"
out=$(rs_bpf stats --dev rs0) || fail "xvs-rs stats: $out"
assert_contains "$out" "attached gue_port $GUE_PORT addrs $RS_IP" "stats: attached, port, address"
[[ -e $BPFFS/xvs-rs/rs0/xvs_rs_stats ]] || fail "no pins under $BPFFS/xvs-rs/rs0"
pass "maps pinned under $BPFFS/xvs-rs/rs0"

res=$(tunnel_traffic) || fail "xvs_rs_client.py failed: $res"
echo "$res" >&2
for k in ipip gue0 gue1; do
    assert_contains "$res" "udp $k vip xvs-rs $k" "UDP over $k reached the VIP's echo, answered from the VIP"
    assert_contains "$res" "synack $k" "TCP SYN over $k answered with a SYN-ACK from the VIP"
done
assert_not_contains "$res" "wrong_rs" "IPIP to an address the RS does not own: no answer"

stats=$(rs_bpf stats --dev rs0) || fail "xvs-rs stats: $stats"
echo "$stats" >&2
stat() { awk -v k="$1" '$1 == k { print $2 }' <<<"$stats"; }
assert_eq 2 "$(stat ipip_decap)" "ipip_decap (one UDP, one SYN)"
assert_eq 4 "$(stat gue_decap)" "gue_decap (v0 and v1, UDP and SYN each)"
assert_eq 1 "$(stat ipip_pass)" "ipip_pass (the datagram to $WRONG_RS)"
assert_eq 0 "$(stat ipip_malformed)" "ipip_malformed"
assert_eq 0 "$(stat gue_malformed)" "gue_malformed"
assert_eq 0 "$(stat outer_malformed)" "outer_malformed"
# Under `ip netns exec` (/sys remounted, no BPF filesystem) xvs-rs finds it through the device.
out=$(in_ns "$NS_RS" "$BUILD/xvs-rs" stats --dev rs0) || fail "xvs-rs stats under ip netns exec: $out"
assert_eq "$(grep -v '^other ' <<<"$stats")" "$(grep -v '^other ' <<<"$out")" "stats through the device = stats through the pins"

# ---- detach, and a program that is not ours ----
out=$(rs_bpf decap --dev rs0 --detach) || fail "xvs-rs decap --detach: $out"
assert_not_contains "$(ip -n "$NS_RS" link show rs0)" "prog/xdp" "no XDP program after --detach"
[[ ! -e $BPFFS/xvs-rs/rs0 ]] || fail "pins left under $BPFFS/xvs-rs/rs0 after --detach"
pass "pins removed by --detach"
# Another XDP program (a bare XDP_PASS, built here) that xvs-rs must leave alone.
need_tools clang
printf '%s\n' '__attribute__((section("xdp"), used)) int foreign(void* ctx) { return 2; }' \
    'char foreign_license[] __attribute__((section("license"), used)) = "GPL";' >"$XE_TMP/foreign.c"
clang -O2 -target bpf -c "$XE_TMP/foreign.c" -o "$XE_TMP/foreign.o" || fail "clang -target bpf"
ip -n "$NS_RS" link set dev rs0 xdpgeneric obj "$XE_TMP/foreign.o" sec xdp ||
    fail "attaching a foreign XDP program with ip link"
out=$(rs_bpf decap --dev rs0 2>&1) && fail "xvs-rs decap replaced a foreign XDP program: $out"
assert_contains "$out" "that xvs-rs did not attach is on rs0" "a foreign XDP program is refused"
out=$(rs_bpf decap --dev rs0 --detach 2>&1) && fail "xvs-rs --detach removed a foreign program: $out"
assert_contains "$(ip -n "$NS_RS" link show rs0)" " xdpgeneric " "the foreign program stays"
ip -n "$NS_RS" link set dev rs0 xdpgeneric off
log "done"
