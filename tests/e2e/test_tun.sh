#!/usr/bin/env bash
# TUN mode, IPIP and GUE: the director encapsulates client packets to each RS; the RS kernel
# has no ipip/fou module, so `xvs-rs decap` (XDP) removes the outer header and the inner packet
# reaches the VIP on lo (set up by `xvs-rs sysctl`). Replies go straight to the client.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/mode_checks.sh"
e2e_init "${1:-build}"
need_tools sha256sum tcpdump
[[ -x $BUILD/xvs-rs ]] || fail "$BUILD/xvs-rs not built"

topo_up 2
direct_return_up
for i in 1 2; do
    in_ns "$(ns_rs "$i")" "$BUILD/xvs-rs" sysctl --vip "$VIP" --dev rs0 >/dev/null ||
        fail "xvs-rs sysctl on rs$i"
    in_ns "$(ns_rs "$i")" "$BUILD/xvs-rs" decap --dev rs0 --gue-port 6080 >/dev/null ||
        fail "xvs-rs decap on rs$i"
    XE_RS_LISTEN="$VIP:80" start_rs_http "$i"
    start_rs_udp "$i" "$VIP"
done
UDP_VPORT=5353
conf=$XE_TMP/xvs.conf
{
    config_head
    vs_block TCP "$VIP" 80 "1:80:3 2:80:1" wrr TUN
    vs_block UDP "$VIP" 5353 "1:5353:1 2:5353:1" rr "TUN type gue port 6080"
} >"$conf"
start_xvsd "$conf"

bg_ns "$NS_CL" "$XE_TMP/cap.out" timeout 60 tcpdump -n -i cl0 -w "$XE_TMP/cl0.pcap" "ip and src host $VIP"
cap=$BG_PID
sleep 1
mode_check_http_split
mode_check_client_address
mode_check_download
mode_check_udp
kill -INT "$cap" 2>/dev/null
wait "$cap" 2>/dev/null
assert_eq 0 "$(tcpdump -n -r "$XE_TMP/cl0.pcap" 2>/dev/null | wc -l)" "frames from the VIP on cl0"
stats=$(in_ns "$(ns_rs 1)" "$BUILD/xvs-rs" stats --dev rs0)
echo "$stats" >&2
assert_ge "$(awk '$1 == "ipip_decap" { print $2 }' <<<"$stats")" 40 "IPIP packets rs1 decapsulated"
assert_ge "$(awk '$1 == "gue_decap" { print $2 }' <<<"$stats")" 1 "GUE packets rs1 decapsulated"
list=$(xvsadm_ns -L -n)
assert_contains "$list" "$(printf -- '-> %-28s %-7s %-6s' "$(rs_ip 1):80" Tunnel 3)" "xvsadm -L shows Tunnel"
