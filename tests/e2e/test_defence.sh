#!/usr/bin/env bash
# Admission control end to end, through xvsadm against a running xvsd:
#   1. a blacklisted client (xvsadm -U -k) gets no connection: curl fails, drop_blacklisted
#      counts its SYNs, -B lists the entry; after -V it is served again;
#   2. a whitelist without the client (-O --whtlst) refuses it (drop_not_whitelisted), one
#      with it (the whole client subnet) serves it;
#   3. --conn-rate 5 on the service: of 30 parallel requests the burst of 5 plus the refill
#      over their duration are answered, the rest counted as drop_conn_rate;
#   4. -x 1 on both servers with held-open connections: a new one is refused
#      (drop_dest_overloaded) until they close.
source "$(dirname "$0")/lib.sh"
e2e_init "${1:-build}"
[[ -x $BUILD/xvsctl ]] || fail "$BUILD/xvsctl not built"

topo_up 2
start_rs_http 1
start_rs_http 2
conf=$XE_TMP/xvs.conf
{ config_head; vs_block TCP "$VIP" 80 "1:8080:1 2:8080:1" rr; } >"$conf"
start_xvsd "$conf"
svc=(-t "$VIP:80")

# Warm-up (ARP for both real servers), then a baseline.
http_loop 4 "$XE_TMP/warm" "http://$VIP/" 30
assert_eq 0 "$(grep -c '^ERR' "$XE_TMP/warm")" "warm-up requests failed"

# 1. Blacklist.
xvsadm_ns -U "${svc[@]}" -k "$CLIENT_IP" || fail "xvsadm -U"
listed=$(xvsadm_ns -B)
echo "$listed" >&2
assert_contains "$listed" "TCP      $VIP:80" "-B lists the service"
assert_contains "$listed" "$CLIENT_IP" "-B lists the client"
http_loop 3 "$XE_TMP/black" "http://$VIP/" 30
assert_eq 3 "$(grep -c '^ERR' "$XE_TMP/black")" "blacklisted requests refused"
assert_ge "$(counter drop_blacklisted)" 3 "drop_blacklisted"
saved=$(xvsadm_ns -S -n)
assert_contains "$saved" "-U -t $VIP:80 -k $CLIENT_IP" "-S saves the blacklist"
xvsadm_ns -V "${svc[@]}" -k "$CLIENT_IP" || fail "xvsadm -V"
http_loop 3 "$XE_TMP/unblack" "http://$VIP/" 30
assert_eq 0 "$(grep -c '^ERR' "$XE_TMP/unblack")" "requests after -V failed"

# 2. Whitelist.
xvsadm_ns -O "${svc[@]}" --whtlst 192.0.2.0/24 || fail "xvsadm -O"
http_loop 2 "$XE_TMP/white" "http://$VIP/" 30
assert_eq 2 "$(grep -c '^ERR' "$XE_TMP/white")" "non-whitelisted requests refused"
assert_ge "$(counter drop_not_whitelisted)" 2 "drop_not_whitelisted"
xvsadm_ns -O "${svc[@]}" --whtlst 10.10.1.0/24 || fail "xvsadm -O client subnet"
http_loop 2 "$XE_TMP/white2" "http://$VIP/" 30
assert_eq 0 "$(grep -c '^ERR' "$XE_TMP/white2")" "whitelisted requests failed"
assert_contains "$(xvsadm_ns -W)" "10.10.1.0/24" "-W lists the whitelist"

# 3. Rate cap: 5 new connections per second.
xvsadm_ns -E "${svc[@]}" -s rr --conn-rate 5 || fail "xvsadm -E --conn-rate"
assert_contains "$(xvsadm_ns -L -n)" "rr conn-rate 5" "-L shows the cap"
# 30 requests at once (within well under a second; --max-time 0.5 stays below curl's first SYN
# retransmission): the bucket's one-second burst of 5 plus what refills meanwhile get through.
t0=$(date +%s%N)
# shellcheck disable=SC2016
in_ns "$NS_CL" timeout 30 bash -c 'for ((k = 0; k < 30; k++)); do
    (curl -s --max-time 0.5 -H "Connection: close" "$1"; echo) & done; wait' _ "http://$VIP/" >"$XE_TMP/rate"
ms=$((($(date +%s%N) - t0) / 1000000))
ok=$(grep -c '^rs[12]$' "$XE_TMP/rate")
log "rate: $ok of 30 parallel requests answered in ${ms} ms"
assert_ge "$ok" 5 "answers under a 5/s cap (the one-second burst)"
assert_le "$ok" $((5 + (5 * ms + 999) / 1000)) "answers under a 5/s cap within ${ms} ms"
assert_ge "$(counter drop_conn_rate)" 1 "drop_conn_rate"
xvsadm_ns -E "${svc[@]}" -s rr || fail "xvsadm -E without cap"

# 4. Thresholds: one connection per server, held open by idle sessions. Closed connections
# still count (inactive) until they expire: start from an empty table.
wait_until 20 bash -c "! XVS_SOCKET=$XE_SOCK $BUILD/xvsadm -L -n -c | grep -q '^TCP'" ||
    fail "connections of the earlier steps did not expire"
for rs in 2 3; do
    xvsadm_ns -e "${svc[@]}" -r "10.10.2.$rs:8080" --fullnat -w 1 -x 1 || fail "xvsadm -e -x 1"
done
assert_contains "$(xvsadm_ns -L -n --thresholds)" "1          0" "--thresholds shows -x 1"
for k in 1 2; do
    bg_ns "$NS_CL" "$XE_TMP/hold$k" timeout 20 bash -c "sleep 15 | socat - TCP:$VIP:80"
    wait_until 5 bash -c "XVS_SOCKET=$XE_SOCK $BUILD/xvsadm -L -n -c | grep -c ESTABLISHED | grep -qx $k"
done
assert_eq 2 "$(xvsadm_ns -L -n -c | grep -c ESTABLISHED)" "held connections"
before=$(counter drop_dest_overloaded)
http_loop 2 "$XE_TMP/over" "http://$VIP/" 30
assert_eq 2 "$(grep -c '^ERR' "$XE_TMP/over")" "requests refused while both servers are at -x 1"
assert_ge "$(counter drop_dest_overloaded)" $((${before:-0} + 2)) "drop_dest_overloaded"
pass "blacklist, whitelist, conn-rate cap and connection thresholds enforced and counted"
