#!/usr/bin/env bash
# SNAT (masquerading, seed 002; DPVS's "match" services): the RS namespaces are inside hosts
# (10.10.2.x, default route the director's LAN address 10.10.2.1) and reach an outside nginx,
# UDP echo and ping in the client namespace (10.10.1.2). The client namespace has no route
# back to the inside network, so every answer it gives must be to the WAN address: nginx's
# log holds only 10.10.1.1, and replies reach the inside hosts only because the director
# rewrites them back.
source "$(dirname "$0")/lib.sh"
e2e_init "${1:-build}"
need_tools sha256sum ping

topo_up 2
OUT_IP=$CLIENT_IP
WAN_IP=10.10.1.1
ip -n "$NS_CL" route del default # the outside knows nothing of 10.10.2.0/24

# The outside: nginx on 10.10.1.2:8080 logging its peers, serving / and a 20 MB file; a UDP
# echo on 10.10.1.2:5353 answering "out <payload>".
out_dir=$XE_TMP/out
mkdir -p "$out_dir/tmp"
head -c $((20 * 1024 * 1024)) /dev/urandom >"$XE_TMP/big.bin"
cat >"$out_dir/nginx.conf" <<EOF
daemon off;
master_process off;
worker_processes 1;
pid $out_dir/nginx.pid;
error_log $out_dir/error.log warn;
events { worker_connections 1024; }
http {
    log_format peer '\$remote_addr';
    access_log $out_dir/access.log peer;
    client_body_temp_path $out_dir/tmp/body;
    proxy_temp_path $out_dir/tmp/proxy;
    fastcgi_temp_path $out_dir/tmp/fastcgi;
    uwsgi_temp_path $out_dir/tmp/uwsgi;
    scgi_temp_path $out_dir/tmp/scgi;
    server {
        listen $OUT_IP:8080;
        location = / { default_type text/plain; return 200 "outside\n"; }
        location = /big.bin { alias $XE_TMP/big.bin; }
    }
}
EOF
bg_ns "$NS_CL" "$out_dir/nginx.out" nginx -c "$out_dir/nginx.conf"
wait_until 10 in_ns "$NS_CL" curl -s --max-time 1 -o /dev/null "http://$OUT_IP:8080/" ||
    fail "outside nginx did not start: $(cat "$out_dir/nginx.out" "$out_dir/error.log" 2>/dev/null)"
: >"$out_dir/access.log"
bg_ns "$NS_CL" "$out_dir/udp.out" "$XE_PY" "$XE_LIB_DIR/udp_echo.py" "$OUT_IP" 5353 "out "

match_block() { # PROTO NAME
    cat <<EOF
virtual_server match $2 {
    protocol $1
    lb_algo rr
    lb_kind SNAT
    src-range 10.10.2.2-10.10.2.254
    oif wan0
    iif lan0
    real_server $WAN_IP 0 { weight 1 }
}
EOF
}
conf=$XE_TMP/xvs.conf
{
    config_head
    match_block TCP snat_tcp
    match_block UDP snat_udp
    match_block ICMP snat_icmp
} >"$conf"
start_xvsd "$conf"

list=$(xvsadm_ns -L -n)
echo "$list" >&2
assert_contains "$list" "MATCH tcp,from=10.10.2.2-10.10.2.254,iif=lan0,oif=wan0 rr" "xvsadm -L lists the match service"
assert_contains "$list" "-> $WAN_IP:0                  SNAT    1" "xvsadm -L shows the WAN address as SNAT"

# Short connections from both inside hosts, all answered.
ok=0
for i in 1 2; do
    for ((k = 0; k < 10; k++)); do
        body=$(in_ns "$(ns_rs "$i")" curl -s --max-time 2 -H "Connection: close" "http://$OUT_IP:8080/")
        [[ $body == outside ]] && ok=$((ok + 1))
    done
done
assert_eq 20 "$ok" "HTTP requests from inside answered"
assert_eq "$WAN_IP" "$(sort -u "$out_dir/access.log" | tr '\n' ' ' | sed 's/ $//')" \
    "peer addresses the outside nginx saw"

# 20 MB download from inside, byte-identical.
want=$(sha256sum <"$XE_TMP/big.bin" | cut -d' ' -f1)
in_ns "$(ns_rs 1)" curl -s --max-time 30 -o "$XE_TMP/dl" "http://$OUT_IP:8080/big.bin"
got=$(sha256sum <"$XE_TMP/dl" | cut -d' ' -f1)
assert_eq "$want" "$got" "sha256 of a 20 MB download through SNAT"

# UDP: 200 exchanges over 10 source ports from rs1.
res=$(in_ns "$(ns_rs 1)" timeout 30 "$XE_PY" "$XE_LIB_DIR/udp_client.py" "$OUT_IP" 5353 200 10 20) ||
    fail "udp client: $res"
answered=$(awk '$1 == "sent" { print $4 }' <<<"$res")
log "UDP: $(tr '\n' ' ' <<<"$res")"
assert_ge "${answered:-0}" 198 "UDP datagrams answered of 200"
assert_contains "$res" "out " "UDP answers from the outside echo"

# Ping from both inside hosts at once (their echo identifiers may collide: the director maps
# them to its own).
pings=()
for i in 1 2; do
    in_ns "$(ns_rs "$i")" timeout 10 ping -c 5 -i 0.2 -W 1 "$OUT_IP" >"$XE_TMP/ping$i" 2>&1 &
    pings+=($!)
done
wait "${pings[@]}"
for i in 1 2; do
    assert_contains "$(cat "$XE_TMP/ping$i")" "5 packets transmitted, 5 received" "ping from rs$i"
done

# A datagram from the outside to the WAN address with no connection behind it: dropped and
# counted, nothing reaches an inside host.
before=$(counter drop_to_director)
in_ns "$NS_CL" "$XE_PY" -c "import socket; s=socket.socket(socket.AF_INET, socket.SOCK_DGRAM); [s.sendto(b'x', ('$WAN_IP', 40000)) for _ in range(3)]"
counter_at_least() { (($(counter "$1") >= $2)); } # NAME MIN
wait_until 5 counter_at_least drop_to_director $((before + 3)) ||
    fail "unrelated datagrams to the WAN address were not counted as drop_to_director"
pass "unrelated datagrams to the WAN address counted (drop_to_director)"

conns=$(xvsadm_ns -L -n -c)
assert_contains "$conns" "$WAN_IP" "SNAT connections listed with their WAN address"
assert_eq 0 "$(counter drop_not_local)" "drop_not_local (every inside packet matched a service)"
