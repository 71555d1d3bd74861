#!/usr/bin/env bash
# 1000 UDP request/response exchanges through a FULLNAT UDP VIP (VIP:53 -> RS:5353 echo),
# spread over 20 client ports: >= 99.5% answered within a bounded time, both RS used.
source "$(dirname "$0")/lib.sh"
e2e_init "${1:-build}"

topo_up 2
start_rs_udp 1
start_rs_udp 2
conf=$XE_TMP/xvs.conf
{ config_head; vs_block UDP "$VIP" 53 "1:5353:1 2:5353:1" rr; } >"$conf"
start_xvsd "$conf"

# warm-up: xvsd resolves the RS addresses (ARP) on first use and queues only a few packets
# meanwhile; the measurement starts once both RS have answered once.
for k in 1 2 3; do
    warm=$(in_ns "$NS_CL" timeout 10 "$XE_PY" "$XE_LIB_DIR/udp_client.py" "$VIP" 53 4 2 5)
    grep -q '^rs1 ' <<<"$warm" && grep -q '^rs2 ' <<<"$warm" && break
done
log "warm-up: $(tr '\n' ' ' <<<"$warm")"
res=$(in_ns "$NS_CL" timeout 60 "$XE_PY" "$XE_LIB_DIR/udp_client.py" "$VIP" 53 1000 20 30) ||
    fail "udp client failed: $res"
echo "$res" >&2
sent=$(awk '$1 == "sent" { print $2 }' <<<"$res")
answered=$(awk '$1 == "sent" { print $4 }' <<<"$res")
rs1=$(awk '$1 == "rs1" { print $2 }' <<<"$res")
rs2=$(awk '$1 == "rs2" { print $2 }' <<<"$res")
log "UDP: sent $sent answered $answered (rs1 ${rs1:-0}, rs2 ${rs2:-0})"
assert_eq 1000 "$sent" "datagrams sent"
assert_ge "$answered" 995 "datagrams answered (99.5%)"
assert_ge "${rs1:-0}" 1 "answers from rs1"
assert_ge "${rs2:-0}" 1 "answers from rs2"

stats=$(xvsadm_ns -L -n --stats --exact)
echo "$stats" >&2
conns=$(awk -v k="$VIP:53" '$1 == "UDP" && $2 == k { print $3 }' <<<"$stats")
inpkts=$(awk -v k="$VIP:53" '$1 == "UDP" && $2 == k { print $4 }' <<<"$stats")
assert_ge "${conns:-0}" 20 "UDP service conns (one per client port)"
assert_ge "${inpkts:-0}" 1000 "UDP service InPkts (warm-up included)"
conns_c=$(xvsadm_ns -L -n -c | grep -c "^UDP ")
assert_ge "$conns_c" 20 "UDP entries in xvsadm -L -n -c"
