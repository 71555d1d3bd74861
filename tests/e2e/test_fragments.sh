#!/usr/bin/env bash
# IPv4 fragments are never forwarded, on every PMD (xvs does not reassemble yet):
#   - a whole 100-byte datagram to the UDP VIP is answered (baseline);
#   - the same datagram in two fragments, and a 3000-byte one in three, get no answer and
#     reach no real server;
#   - af_xdp: xvs sees each fragment and counts it (drop_ip_fragment);
#   - af_packet: DPDK 22.11's PMD joins a PACKET_FANOUT group with PACKET_FANOUT_FLAG_DEFRAG,
#     so the kernel would reassemble fragments before xvs sees them (and a small fragmented
#     datagram would go through). start_xvsd sets ipfrag_high_thresh=0 in the director's
#     namespace, as the README tells af_packet deployments to: the kernel then drops fragments
#     (IpReasmFails) and xvsd does not warn. Without it xvsd warns at startup (checked here).
source "$(dirname "$0")/lib.sh"
e2e_init "${1:-build}"
reasm_fails() { in_ns "$NS_LB" nstat -az IpReasmFails | awk '$1 == "IpReasmFails" { print $2 }'; }
send_dgram() { # SIZE FRAGSIZE -> bytes answered
    in_ns "$NS_CL" timeout 20 "$XE_PY" "$XE_LIB_DIR/frag_client.py" cl0 "$CLIENT_IP" "$VIP" 53 "$1" "$2" 1.5 |
        awk '{ print $4 }'
}

topo_up 1
start_rs_udp 1
conf=$XE_TMP/xvs.conf
{ config_head; vs_block UDP "$VIP" 53 "1:5353:1" rr; } >"$conf"
start_xvsd "$conf"
if [[ ${XE_PMD:-af_xdp} == af_packet ]]; then
    assert_not_contains "$(cat "$XVSD_LOG")" "reassembles IP fragments" "no defrag warning with ipfrag_high_thresh=0"
fi

for k in 1 2 3; do # warm-up: ARP for the RS
    [[ $(send_dgram 100 0) -gt 0 ]] && break
done
assert_ge "$(send_dgram 100 0)" 100 "a whole datagram is answered"
frag_before=$(counter drop_ip_fragment)
reasm_before=$(reasm_fails)
rs_before=$(wc -l <"$XE_TMP/udp1.out")
assert_eq 0 "$(send_dgram 100 56)" "answer to a datagram in two fragments"
assert_eq 0 "$(send_dgram 3000 1480)" "answer to a datagram in three fragments"
sleep 0.3
frags=$(($(counter drop_ip_fragment) - frag_before))
kernel=$(($(reasm_fails) - reasm_before))
log "fragments counted by xvs: $frags, dropped by the lb kernel: $kernel"
if [[ ${XE_PMD:-af_xdp} == af_packet ]]; then
    assert_eq 0 "$frags" "fragments reaching xvs on af_packet"
    assert_ge "$kernel" 5 "fragments dropped by the kernel (IpReasmFails)"
else
    assert_eq 5 "$frags" "drop_ip_fragment"
fi
assert_ge "$(send_dgram 100 0)" 100 "whole datagrams still answered"

if [[ ${XE_PMD:-af_xdp} == af_packet ]]; then
    stop_xvsd
    in_ns "$NS_LB" sysctl -qw net.ipv4.ipfrag_high_thresh=4194304
    XE_FRAG_KEEP=1 start_xvsd "$conf"
    assert_contains "$(cat "$XVSD_LOG")" "reassembles IP fragments" "xvsd warns when the kernel would reassemble"
fi
pass "fragments are not forwarded"
