#!/usr/bin/env bash
# DR (direct routing) mode: the director changes only the destination MAC; each RS has the VIP
# on lo with arp_ignore=1/arp_announce=2 and answers the client directly over the client's
# second leg, so a capture on the director-facing client interface sees no reply at all.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/mode_checks.sh"
e2e_init "${1:-build}"
need_tools sha256sum tcpdump

topo_up 2
direct_return_up
rs_vip_by_hand 1
rs_vip_by_hand 2
XE_RS_LISTEN="$VIP:80" start_rs_http 1
XE_RS_LISTEN="$VIP:80" start_rs_http 2
start_rs_udp 1 "$VIP"
start_rs_udp 2 "$VIP"
UDP_VPORT=5353
conf=$XE_TMP/xvs.conf
{
    config_head
    vs_block TCP "$VIP" 80 "1:80:3 2:80:1" wrr DR
    vs_block UDP "$VIP" 5353 "1:5353:1 2:5353:1" rr DR
} >"$conf"
start_xvsd "$conf"

# Replies must not pass the director: count IP packets from the VIP arriving on cl0 (not ARP:
# the VIP is on the client's subnet, so the director answers its ARP requests there).
bg_ns "$NS_CL" "$XE_TMP/cap.out" timeout 60 tcpdump -n -i cl0 -w "$XE_TMP/cl0.pcap" "ip and src host $VIP"
cap=$BG_PID
sleep 1
mode_check_http_split
mode_check_client_address
mode_check_download
mode_check_udp
kill -INT "$cap" 2>/dev/null
wait "$cap" 2>/dev/null
seen=$(tcpdump -n -r "$XE_TMP/cl0.pcap" 2>/dev/null | wc -l)
assert_eq 0 "$seen" "frames from the VIP on the director-facing client interface"
list=$(xvsadm_ns -L -n)
assert_contains "$list" "$(printf -- '-> %-28s %-7s %-6s' "$(rs_ip 1):80" Route 3)" "xvsadm -L shows Route"
