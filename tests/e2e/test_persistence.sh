#!/usr/bin/env bash
# Stickiness through xvsd with real TCP stacks: clients from 8 source addresses (secondary
# addresses on the client) to an sh and an mh FULLNAT service each stay on one real server
# and, over the 8, use both; `persistence_timeout 30` with rr keeps one client on one server
# across 30 connections (rr alone alternates), shown as a template by xvsadm -L -c; a
# firewall-mark service with persistence keeps a client on one server across two ports; a UDP
# conhash service with hash_target qid places QUIC-shaped datagrams by connection ID: the
# Initial from one address and the short header with that ID from another meet one server,
# and one client address's connections use both.
source "$(dirname "$0")/lib.sh"
e2e_init "${1:-build}"

topo_up 2
start_rs_http 1
start_rs_http 2
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
    config_head
    vs_block TCP "$VIP" 80 "1:8080:1 2:8080:1" sh
    vs_block TCP "$VIP" 81 "1:8080:1 2:8080:1" mh
    persistent_vs 82 30
    persistent_vs 85 ""
    echo "fwmark_defs {"
    echo "    mark 1 {"
    echo "        $VIP 83 tcp"
    echo "        $VIP 84 tcp"
    echo "    }"
    echo "}"
    persistent_vs 1 300 fwmark
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
