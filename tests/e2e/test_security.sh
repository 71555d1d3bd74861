#!/usr/bin/env bash
# An attacker on the client link, end to end:
#   1. forged ARP (requests and replies) claiming RS1's LAN address, sent from the client side
#      every 20 ms while 200 requests run: every request succeeds, `xvsctl neigh show` keeps
#      RS1 on lan0 with its own MAC, drop_arp_off_link counts the forgeries;
#   2. 3,000 ARP requests for the VIP from off-subnet senders: none answered, none learned
#      (the neighbour table stays small), then a new client address is served;
#   3. SYNs from martian sources (0/8, 127/8, multicast, broadcast, the VIP, the director,
#      a LIP) create no connection and make xvsd ARP for nothing; drop_martian_source.
source "$(dirname "$0")/lib.sh"
e2e_init "${1:-build}"
[[ -x $BUILD/xvsctl ]] || fail "$BUILD/xvsctl not built"
ATTACK="$XE_PY $XE_LIB_DIR/arp_attack.py"

topo_up 2
start_rs_http 1
start_rs_http 2
conf=$XE_TMP/xvs.conf
{ config_head; vs_block TCP "$VIP" 80 "1:8080:1 2:8080:1" rr; } >"$conf"
start_xvsd "$conf"

http_loop 10 "$XE_TMP/warm" "http://$VIP/" 30
assert_eq 0 "$(grep -c '^ERR' "$XE_TMP/warm")" "warm-up requests failed"
rs1_mac=$(ip -n "$(ns_rs 1)" link show rs0 | awk '/link\/ether/ { print $2 }')
neigh_rs1() { xvsctl_ns neigh show | awk -v a="$(rs_ip 1)" '$1 == a'; }
before=$(neigh_rs1)
assert_contains "$before" "$rs1_mac" "RS1 learned with its MAC"
assert_contains "$before" "lan0" "RS1 learned on lan0"

# 1. ARP hijack attempt during traffic (bounded: 250 rounds of 3 frames, 20 ms apart).
bg_ns "$NS_CL" "$XE_TMP/hijack.log" $ATTACK cl0 hijack "$(rs_ip 1)" "$VIP" 250 0.02
hijack_pid=$BG_PID
http_loop 200 "$XE_TMP/during" "http://$VIP/" 90
wait "$hijack_pid" || fail "hijack sender failed: $(cat "$XE_TMP/hijack.log")"
assert_eq 0 "$(grep -c '^ERR' "$XE_TMP/during")" "requests failed during the ARP forgeries"
assert_ge "$(count_lines rs1 "$XE_TMP/during")" 90 "RS1 still served"
after=$(neigh_rs1)
log "RS1 entry before: $before / after: $after"
assert_contains "$after" "$rs1_mac" "RS1 keeps its MAC"
assert_contains "$after" "lan0" "RS1 stays on lan0"
assert_not_contains "$(xvsctl_ns neigh show)" "02:ba:d0:00:00:01" "attacker MAC learned"
assert_ge "$(counter drop_arp_off_link)" 700 "drop_arp_off_link counts the forgeries"

# 2. 3,000 off-subnet requesters.
off_before=$(counter drop_arp_off_link)
in_ns "$NS_CL" timeout 120 $ATTACK cl0 offlink "$VIP" 3000 || fail "offlink sender failed"
sleep 0.5
off=$(($(counter drop_arp_off_link) - off_before))
log "off-link ARP requests counted: $off of 3000"
assert_ge "$off" 2990 "off-link ARP requests counted"
entries=$(xvsctl_ns neigh show | grep -c '^10\.')
assert_le "$entries" 4 "neighbour entries after the off-link flood"
ip -n "$NS_CL" addr add 10.10.1.3/24 dev cl0
body=$(http_get --interface 10.10.1.3 "http://$VIP/")
assert_contains "$body" "rs" "a new client after the flood is served"

# 3. Martian sources.
created_before=$(counter conns_created)
arp_before=$(counter arp_requests_sent)
martians=(0.0.0.0 0.1.2.3 127.0.0.1 224.0.0.5 239.255.255.250 240.0.0.1 255.255.255.255 "$VIP" 10.10.1.1 10.10.2.100)
lb_mac=$(ip -n "$NS_LB" link show lb-wan | awk '/link\/ether/ { print $2 }')
in_ns "$NS_CL" timeout 60 $ATTACK cl0 martian "$VIP" "$lb_mac" 80 "${martians[@]}" || fail "martian sender failed"
sleep 0.5
assert_eq "$created_before" "$(counter conns_created)" "conns created by martian SYNs"
assert_eq "$arp_before" "$(counter arp_requests_sent)" "ARP requests caused by martian SYNs"
assert_ge "$(counter drop_martian_source)" "${#martians[@]}" "drop_martian_source"
conns=$(xvsadm_ns -L -n -c)
for m in 0.0.0.0 127.0.0.1 224.0.0.5 255.255.255.255; do
    assert_not_contains "$conns" "$m:" "a conn from $m"
done
body=$(http_get "http://$VIP/")
assert_contains "$body" "rs" "served after the martian SYNs"
pass "ARP hijack, off-link flood and martian sources changed nothing"
