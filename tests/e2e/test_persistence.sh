#!/usr/bin/env bash
# Stickiness through xvsd with real TCP stacks: clients from 8 source addresses (secondary
# addresses on the client) to an sh and an mh FULLNAT service each stay on one real server
# and, over the 8, use both; `persistence_timeout 30` with rr keeps one client on one server
# across 30 connections (rr alone alternates), shown as a template by xvsadm -L -c; a
# firewall-mark service with persistence keeps a client on one server across two ports; a UDP
# conhash service with hash_target qid places QUIC-shaped datagrams by connection ID: the
# Initial from one address and the short header with that ID from another meet one server,
# and one client address's connections use both. IPv6 firewall marks (-f N -6): mark 1 has
# IPv6 entries too, served by its IPv6 service (FNAT66, the family from its real servers), so
# an IPv6 client's :83 and :84 share a server and its template names 0:1::; mark 2's IPv6
# service (`ip_family inet6`) forwards to IPv4 real servers (FNAT64).
source "$(dirname "$0")/lib.sh"
e2e_init "${1:-build}"

V6_CL=2001:db8:1::2
V6_VIP=2001:db8:1::100
rs6() { echo "2001:db8:2::$(($1 + 1))"; }

topo_up 2
ip -n "$NS_CL" addr add "$V6_CL/64" dev cl0 nodad
ip -n "$NS_CL" -6 route add default via 2001:db8:1::1
for i in 1 2; do
    ip -n "$(ns_rs "$i")" addr add "$(rs6 "$i")/64" dev rs0 nodad
    ip -n "$(ns_rs "$i")" -6 route add default via 2001:db8:2::1
    XE_RS_LISTEN="$(rs_ip "$i"):8080 [$(rs6 "$i")]:8080" start_rs_http "$i"
done
start_rs_udp 1
start_rs_udp 2
CLIENTS=()
for k in $(seq 10 17); do
    ip -n "$NS_CL" addr add "10.10.1.$k/24" dev cl0 || fail "client address 10.10.1.$k"
    CLIENTS+=("10.10.1.$k")
done

# persistent_vs PORT TIMEOUT|"" [fwmark]: an rr FULLNAT service to both RS' :8080.
persistent_vs() {
    if [[ ${3:-} == fwmark ]]; then echo "virtual_server fwmark $1 {"; else
        echo "virtual_server $VIP $1 {"
        echo "    protocol TCP"
    fi
    echo "    lb_algo rr"
    echo "    lb_kind FNAT"
    echo "    laddr_group_name lips"
    [[ -n $2 ]] && echo "    persistence_timeout $2"
    echo "    real_server $(rs_ip 1) 8080 { weight 1 }"
    echo "    real_server $(rs_ip 2) 8080 { weight 1 }"
    echo "}"
}

conf=$XE_TMP/xvs.conf
{
    XE_IP_EXTRA="    address 2001:db8:1::1/64 dev wan0
    address 2001:db8:2::1/64 dev lan0" config_head
    echo "local_address_group lips6 { 2001:db8:2::100-103 lan0 }"
    vs_block TCP "$VIP" 80 "1:8080:1 2:8080:1" sh
    vs_block TCP "$VIP" 81 "1:8080:1 2:8080:1" mh
    persistent_vs 82 30
    persistent_vs 85 ""
    echo "fwmark_defs {"
    echo "    mark 1 {"
    echo "        $VIP 83 tcp"
    echo "        $VIP 84 tcp"
    echo "        $V6_VIP 83 tcp"
    echo "        $V6_VIP 84 tcp"
    echo "    }"
    echo "    mark 2 { $V6_VIP 86 tcp }"
    echo "}"
    persistent_vs 1 300 fwmark
    # mark 1's IPv6 service: IPv6 real servers make it one (keepalived's rule).
    echo "virtual_server fwmark 1 {"
    echo "    lb_algo rr"
    echo "    lb_kind FNAT"
    echo "    laddr_group_name lips6"
    echo "    persistence_timeout 300"
    echo "    persistence_granularity 64"
    echo "    real_server $(rs6 1) 8080 { weight 1 }"
    echo "    real_server $(rs6 2) 8080 { weight 1 }"
    echo "}"
    # mark 2's IPv6 service to IPv4 real servers (FNAT64): ip_family says its family.
    echo "virtual_server fwmark 2 {"
    echo "    ip_family inet6"
    echo "    lb_algo rr"
    echo "    lb_kind FNAT"
    echo "    laddr_group_name lips"
    echo "    real_server $(rs_ip 1) 8080 { weight 1 }"
    echo "    real_server $(rs_ip 2) 8080 { weight 1 }"
    echo "}"
    echo "virtual_server $VIP 443 {"
    echo "    protocol UDP"
    echo "    lb_algo conhash"
    echo "    hash_target qid"
    echo "    quic_cid_len 8"
    echo "    lb_kind FNAT"
    echo "    laddr_group_name lips"
    echo "    real_server $(rs_ip 1) 5353 { weight 1 }"
    echo "    real_server $(rs_ip 2) 5353 { weight 1 }"
    echo "}"
} >"$conf"
start_xvsd "$conf"

# bodies SOURCE PORT COUNT : COUNT sequential connections from source address SOURCE to
# VIP:PORT; prints the distinct bodies (rs1/rs2/ERRn) with their counts ("rs1:5 ").
bodies() {
    # shellcheck disable=SC2016
    in_ns "$NS_CL" timeout 60 bash -c '
        for ((k = 0; k < $4; k++)); do
            body=$(curl -s --max-time 2 --interface "$1" -H "Connection: close" "http://$2:$3/")
            rc=$?
            if ((rc == 0)) && [[ -n $body ]]; then echo "$body"; else echo "ERR$rc"; fi
        done' _ "$1" "$VIP" "$2" "$3" | sort | uniq -c | awk '{ print $2 ":" $1 }' | tr '\n' ' '
}

# bodies6 PORT COUNT [VIP]: as bodies, from the client's IPv6 address to [V6_VIP]:PORT.
bodies6() {
    # shellcheck disable=SC2016
    in_ns "$NS_CL" timeout 60 bash -c '
        for ((k = 0; k < $4; k++)); do
            body=$(curl -6 -g -s --max-time 2 --interface "$1" -H "Connection: close" \
                "http://[$2]:$3/")
            rc=$?
            if ((rc == 0)) && [[ -n $body ]]; then echo "$body"; else echo "ERR$rc"; fi
        done' _ "$V6_CL" "${3:-$V6_VIP}" "$1" "$2" | sort | uniq -c | awk '{ print $2 ":" $1 }' |
        tr '\n' ' '
}

# warm-up: the director resolves the client addresses and both RS on first use.
for c in "${CLIENTS[@]}"; do bodies "$c" 85 2 >/dev/null; done

for port in 80 81; do
    used=""
    for c in "${CLIENTS[@]}"; do
        got=$(bodies "$c" "$port" 5)
        log "port $port client $c: $got"
        [[ $got == "rs1:5 " || $got == "rs2:5 " ]] || fail "client $c to :$port not on one server: $got"
        used+=" ${got%%:*}"
    done
    n_rs1=$(grep -o rs1 <<<"$used" | wc -l)
    n_rs2=$(grep -o rs2 <<<"$used" | wc -l)
    log "port $port: $n_rs1 clients on rs1, $n_rs2 on rs2"
    assert_ge "$n_rs1" 1 "clients of :$port on rs1"
    assert_ge "$n_rs2" 1 "clients of :$port on rs2"
done

# rr without persistence alternates (the control); with persistence_timeout 30 it sticks.
got=$(bodies "$CLIENT_IP" 85 6)
log "rr :85, 6 connections: $got"
assert_eq "rs1:3 rs2:3 " "$got" "rr without persistence alternates"
got=$(bodies "$CLIENT_IP" 82 30)
log "rr persistent :82, 30 connections: $got"
[[ $got == "rs1:30 " || $got == "rs2:30 " ]] || fail "persistent client moved between servers: $got"
sticky=${got%%:*}
got2=$(bodies "${CLIENTS[0]}" 82 4)
log "rr persistent :82, another client: $got2"
[[ $got2 == "rs1:4 " || $got2 == "rs2:4 " ]] || fail "second persistent client moved: $got2"
[[ ${got2%%:*} != "$sticky" ]] || fail "rr gave the second persistent client the same server ($sticky)"
pass "persistence_timeout 30 keeps $CLIENT_IP on $sticky across 30 connections"

list=$(xvsadm_ns -L -n)
echo "$list" >&2
assert_contains "$list" "TCP  $VIP:82 rr persistent 30" "xvsadm -L -n persistent line"
assert_contains "$list" "FWM  1 rr persistent 300" "xvsadm -L -n fwmark service"
conns=$(xvsadm_ns -L -n -c)
tpl=$(grep -E "^TCP +[0-9]+:[0-9]+ +NONE +$CLIENT_IP:0 +$VIP:82 " <<<"$conns")
log "template: $tpl"
[[ -n $tpl ]] || fail "no persistence template for $CLIENT_IP in xvsadm -L -c: $(head -n 20 <<<"$conns")"
grep -q "$(rs_ip "${sticky#rs}"):8080" <<<"$tpl" || fail "template does not name $sticky: $tpl"

# fwmark 1 (ports 83 and 84) with persistence: a client's :83 and :84 connections share a server.
a=$(bodies "$CLIENT_IP" 83 3)
b=$(bodies "$CLIENT_IP" 84 3)
log "fwmark 1: :83 $a :84 $b"
[[ $a == "rs1:3 " || $a == "rs2:3 " ]] || fail "fwmark client moved on :83: $a"
assert_eq "$a" "$b" "fwmark persistence across ports 83 and 84"
fwm=$(grep -E "^IP +[0-9]+:[0-9]+ +NONE +$CLIENT_IP:0 +0\.0\.0\.1:0 " <<<"$(xvsadm_ns -L -n -c)")
log "fwmark template: $fwm"
[[ -n $fwm ]] || fail "no fwmark template (IP ... 0.0.0.1:0) in xvsadm -L -c"

# The same mark for an IPv6 client: its IPv6 service, persistent across :83 and :84 too.
bodies6 83 1 >/dev/null  # warm-up: neighbour discovery of the client and the RS
a=$(bodies6 83 3)
b=$(bodies6 84 3)
log "fwmark 1 IPv6: :83 $a :84 $b"
[[ $a == "rs1:3 " || $a == "rs2:3 " ]] || fail "IPv6 fwmark client moved on :83: $a"
assert_eq "$a" "$b" "IPv6 fwmark persistence across ports 83 and 84"
list=$(xvsadm_ns -L -n)
assert_contains "$list" "FWM  1 IPv6 rr persistent 300 mask 64" "xvsadm -L -n IPv6 fwmark service"
assert_contains "$list" "FWM  2 IPv6 rr" "xvsadm -L -n FNAT64 fwmark service"
assert_contains "$(xvsadm_ns -S -n)" "-A -f 1 -6 -s rr -p 300 -M 64" "xvsadm -S IPv6 fwmark rule"
fwm6=$(grep -E "^IP +[0-9]+:[0-9]+ +NONE +\[2001:db8:1::\]:0 +\[0:1::\]:0 " <<<"$(xvsadm_ns -L -n -c)")
log "IPv6 fwmark template: $fwm6"
[[ -n $fwm6 ]] || fail "no IPv6 fwmark template ([2001:db8:1::]:0 [0:1::]:0, a /64) in xvsadm -L -c"
sticky6=${a%%:*}
grep -qF "[$(rs6 "${sticky6#rs}")]:8080" <<<"$fwm6" || fail "IPv6 template does not name $sticky6: $fwm6"
got=$(bodies6 86 4)
log "fwmark 2 IPv6 (FNAT64): $got"
[[ $got == "rs1:2 rs2:2 " ]] || fail "FNAT64 fwmark service: want rr over both RS, got $got"
pass "IPv6 fwmark services: FNAT66 persistence across the mark's ports, FNAT64 by ip_family"

# conhash hash_target qid (:443 UDP): 16 QUIC connection IDs, each Initial from $CLIENT_IP and
# its short header from one of the 8 other addresses, every datagram a new flow.
quic=$(in_ns "$NS_CL" timeout 60 "$XE_PY" "$XE_LIB_DIR/quic_cid_client.py" "$VIP" 443 16 \
    "$CLIENT_IP" "${CLIENTS[@]}")
log "quic (k, initial's RS, short header's RS):"$'\n'"$quic"
assert_eq 16 "$(awk '$2 != "none" && $2 == $3' <<<"$quic" | wc -l)" \
    "QUIC IDs whose short header from another address reached the Initial's server"
assert_ge "$(awk '$2 == "rs1"' <<<"$quic" | wc -l)" 1 "QUIC connections of one client on rs1"
assert_ge "$(awk '$2 == "rs2"' <<<"$quic" | wc -l)" 1 "QUIC connections of one client on rs2"
assert_contains "$(xvsadm_ns -L -n)" "UDP  $VIP:443 conhash qid" "xvsadm -L -n hash target"
pass "conhash qid: 16 QUIC connection IDs each kept their server across client addresses"
