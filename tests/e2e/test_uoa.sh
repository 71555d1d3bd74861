#!/usr/bin/env bash
# UOA (UDP option of address) on FULLNAT UDP VIPs, checked on the wire at the RS: with
# `uoa_max_trail 4`, VIP:53 (`uoa ipo`) and VIP:54 (`uoa opp`) -> RS:5353. Per mode one flow of
# 7 small datagrams and one whose first datagram is a full 1500 bytes. A capture on the RS must
# show UOA (client 10.10.1.2 and the flow's client port) on datagrams 1..4 and not after, an
# empty datagram carrying UOA right before the full-size one (which goes unchanged), and right
# IP/UDP checksums. The RS kernel (no UOA module) answers ipo datagrams (IP option ignored)
# but drops protocol-248 (opp) ones: opp flows get answers from datagram 5 on only.
# `xvsctl stats -a` counts uoa_inserted, uoa_empty_sent, uoa_fail_mtu.
# XE_UOA=off runs the same traffic against services with `uoa off` (the test must FAIL).
source "$(dirname "$0")/lib.sh"
e2e_init "${1:-build}"
need_tools tcpdump nft timeout
[[ -x $BUILD/xvsctl ]] || fail "$BUILD/xvsctl not built"

TRAIL=4
COUNT=7
UOA_IPO=${XE_UOA:-ipo}
UOA_OPP=${XE_UOA:-opp}
# LABEL:CLIENT_PORT:VIP_PORT:BIG  (client ports unused by anything else in the namespace)
FLOWS_CLIENT="A:42001:53:0 B:42002:53:1 C:42101:54:0 D:42102:54:1"
FLOWS_CHECK="A:42001:ipo:$COUNT:0 B:42002:ipo:$COUNT:1 C:42101:opp:$COUNT:0 D:42102:opp:$COUNT:1"
problems=()
problem() { problems+=("$*"); echo "problem: $*" >&2; }

topo_up 1
start_rs_udp 1
conf=$XE_TMP/xvs.conf
{
    config_head
    echo "ipvs_defs { uoa_max_trail $TRAIL }"
    vs_block UDP "$VIP" 53 "1:5353:1" rr | sed "\$i\\    uoa $UOA_IPO"
    vs_block UDP "$VIP" 54 "1:5353:1" rr | sed "\$i\\    uoa $UOA_OPP"
    vs_block UDP "$VIP" 55 "1:5353:1" rr
} >"$conf"
grep -q "uoa $UOA_OPP" "$conf" || fail "uoa line missing from $conf"
start_xvsd "$conf"

# Warm-up on the plain VIP:55: xvsd resolves the RS (ARP) before the measured flows.
for _ in 1 2 3; do
    warm=$(in_ns "$NS_CL" timeout 10 "$XE_PY" "$XE_LIB_DIR/udp_client.py" "$VIP" 55 2 1 3)
    [[ $(awk '$1 == "sent" { print $4 }' <<<"$warm") -ge 1 ]] && break
done
log "warm-up: $(tr '\n' ' ' <<<"$warm")"

# Capture at the RS: client datagrams (UDP, with or without IP options) and protocol 248.
pcap=$XE_TMP/rs1.pcap
timeout 40 ip netns exec "$(ns_rs 1)" tcpdump -i rs0 -n -U --immediate-mode -s 0 -c 500 -w "$pcap" \
    "udp port 5353 or ip proto 248" 2>"$XE_TMP/tcpdump.err" &
tcpdump_pid=$!
XE_PIDS+=("$tcpdump_pid")
wait_until 10 grep -q "listening on" "$XE_TMP/tcpdump.err" ||
    fail "tcpdump did not start: $(cat "$XE_TMP/tcpdump.err")"

# shellcheck disable=SC2086
res=$(in_ns "$NS_CL" timeout 20 "$XE_PY" "$XE_LIB_DIR/uoa_client.py" "$VIP" "$COUNT" $FLOWS_CLIENT) ||
    fail "uoa client failed: $res"
echo "$res" >&2
answered() { awk -v f="$1" '$1 == "flow" && $2 == f { print $4 }' <<<"$res"; }
has() { [[ ,$1, == *,$2,* ]]; }
# ipo: the RS kernel takes every datagram (the full-size first one's reply is fragmented and
# fragments are not forwarded by xvs: not counted).
for s in 1 2 3 4 5 6 7; do has "$(answered A)" "$s" || problem "ipo flow A: datagram $s not answered ($(answered A))"; done
for s in 2 3 4 5 6 7; do has "$(answered B)" "$s" || problem "ipo flow B: datagram $s not answered ($(answered B))"; done
# opp: datagrams 1..4 carry protocol 248 and die in the RS kernel; 5..7 are plain UDP.
for f in C D; do
    for s in 2 3 4; do has "$(answered $f)" "$s" && problem "opp flow $f: datagram $s answered, so it reached the RS as plain UDP"; done
    for s in 5 6 7; do has "$(answered $f)" "$s" || problem "opp flow $f: datagram $s not answered ($(answered $f))"; done
done
has "$(answered C)" 1 && problem "opp flow C: datagram 1 answered, so it reached the RS as plain UDP"

sleep 0.5
kill -INT "$tcpdump_pid" 2>/dev/null
wait "$tcpdump_pid" 2>/dev/null
log "capture: $(tail -n 2 "$XE_TMP/tcpdump.err" | tr '\n' ' ')"
# shellcheck disable=SC2086
check=$("$XE_PY" "$XE_LIB_DIR/uoa_check.py" "$pcap" "$(rs_ip 1)" "$CLIENT_IP" "$TRAIL" $FLOWS_CHECK 2>&1)
check_rc=$?
echo "$check" >&2
((check_rc == 0)) || problem "UOA on the wire at the RS: $(grep -c '^problem:' <<<"$check") problem(s), first: $(grep -m1 '^problem:\|Error' <<<"$check")"

stats=$(xvsctl_ns stats -a) || fail "xvsctl stats -a failed"
grep -E '^ *uoa_' <<<"$stats" >&2 || echo "$stats" >&2
counter() { awk -v k="$1" '{ for (i = 1; i < NF; i++) if ($i == k || $i == k ":") { print $(i + 1); exit } }' <<<"$stats"; }
# A, C: 4 inserted each; B, D: datagram 1 by the empty datagram, 2..4 inserted.
[[ $(counter uoa_inserted) == 14 ]] || problem "uoa_inserted = $(counter uoa_inserted), expected 14"
[[ $(counter uoa_empty_sent) == 2 ]] || problem "uoa_empty_sent = $(counter uoa_empty_sent), expected 2"
[[ $(counter uoa_fail_mtu) == 2 ]] || problem "uoa_fail_mtu = $(counter uoa_fail_mtu), expected 2"

if ((${#problems[@]})); then
    [[ -n ${XE_KEEP:-} ]] && log "pcap kept: $pcap"
    fail "UOA: ${#problems[@]} problem(s):$(printf '\n  %s' "${problems[@]}")"
fi
pass "UOA ipo/opp with the client's address and port on the first $TRAIL datagrams; empty datagram before a full-size one; counters"
