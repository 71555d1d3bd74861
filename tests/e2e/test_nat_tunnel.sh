#!/usr/bin/env bash
# NatTun (issue 20): NAT carried over IPIP both ways. The real server sits on another subnet
# (10.20.0.0/24) behind a router namespace, holds no VIP, has no route to the clients beyond its
# default route to the router, and runs `xvs-rs tunnel` (tc programs, no ipip/fou module). A UDP
# server that logs recvfrom() peers sees the real client for 1000 datagrams and every reply
# reaches the client from the VIP; nginx logs the client ($remote_addr) for 200 curls; a 20 MB
# download is byte-identical; the RS keeps serving non-tunnel traffic (from the router) the
# plain way; `xvs-rs stats` and xvsd's counters agree. A syn_proxy service (VIP:81) answers 50
# curls and a 20 MB download with the RS's handshake in the tunnel, nginx logging the client; the
# RS's own port unreachable (a closed port behind VIP:54) reaches the client through the tunnel.
source "$(dirname "$0")/lib.sh"
e2e_init "${1:-build}"
need_tools sha256sum nginx curl tc
[[ -x $BUILD/xvs-rs ]] || fail "$BUILD/xvs-rs not built"

NS_RT=$XE-rt
RT_LAN=10.10.2.254 # the router on the director's LAN
RT_RS=10.20.0.1    # ... and on the RS subnet
RS=10.20.0.2
LIP=10.10.2.100

topo_up 0
add_ns "$NS_RT"
ip link add rt-lan netns "$NS_RT" type veth peer name sw-rt netns "$NS_SW" || fail "veth rt-lan"
ip -n "$NS_SW" link set sw-rt master br0 up
no_offloads "$NS_SW" sw-rt
ip -n "$NS_RT" addr add "$RT_LAN/24" dev rt-lan
ip -n "$NS_RT" link set rt-lan up
no_offloads "$NS_RT" rt-lan
NS_RS1=$(ns_rs 1)
add_ns "$NS_RS1"
XE_RS_COUNT=1
ip link add rt-rs netns "$NS_RT" type veth peer name rs0 netns "$NS_RS1" || fail "veth rt-rs"
ip -n "$NS_RT" addr add "$RT_RS/24" dev rt-rs
ip -n "$NS_RT" link set rt-rs up
no_offloads "$NS_RT" rt-rs
in_ns "$NS_RT" sysctl -qw net.ipv4.ip_forward=1
ip -n "$NS_RS1" addr add "$RS/24" dev rs0
ip -n "$NS_RS1" link set rs0 up
ip -n "$NS_RS1" route add default via "$RT_RS"
no_offloads "$NS_RS1" rs0
# The router knows the director's LAN only: clients (10.10.1.0/24) are not reachable from the RS
# side except through the director's tunnel.

# 8081 for the syn_proxy service: NAT tells conns apart by the reply tuple RS:rport -> client,
# so two services to one RS port would share it when the client reuses a port.
XE_RS_LISTEN="$RS:8080 $RS:8081" start_rs_http 1
bg_ns "$NS_RS1" "$XE_TMP/udp1.out" "$XE_PY" "$XE_LIB_DIR/udp_peer_log.py" "$RS" 5353 "rs1 " \
    "$XE_TMP/udp_peers.log"
wait_until 10 bash -c "ip netns exec '$NS_RS1' ss -Huln 'sport = :5353' | grep -q '$RS'" ||
    fail "UDP server on $RS:5353 did not start"

out=$(in_ns "$NS_RS1" "$BUILD/xvs-rs" tunnel --dev rs0 --director "$LIP" --idle 300) ||
    fail "xvs-rs tunnel: $out"
echo "$out" >&2
assert_contains "$out" "directors $LIP" "xvs-rs tunnel names the director"
assert_contains "$(tc -n "$NS_RS1" filter show dev rs0 ingress)" "xvs_rt_ingress" "tc ingress program"
assert_contains "$(tc -n "$NS_RS1" filter show dev rs0 egress)" "xvs_rt_egress" "tc egress program"

conf=$XE_TMP/xvs.conf
{
    XE_LIPS="$LIP" XE_IP_EXTRA="    route 10.20.0.0/24 via $RT_LAN dev lan0" config_head
    for svc in "TCP 80 8080" "UDP 53 5353" "TCP 81 8081 syn_proxy" "UDP 54 5399"; do
        read -r proto vport rport extra <<<"$svc"
        cat <<CONF
virtual_server $VIP $vport {
    protocol $proto
    lb_algo rr
    lb_kind NAT
    nat_tunnel ipip
    laddr_group_name lips
${extra:+    $extra
}    real_server $RS $rport { weight 1 }
}
CONF
    done
} >"$conf"
start_xvsd "$conf"
list=$(xvsadm_ns -L -n)
echo "$list" >&2
assert_contains "$list" "$RS:8080" "xvsadm -L lists the RS"
assert_contains "$list" "NatTun" "xvsadm -L shows NatTun"

# ---- UDP: 1000 datagrams, recvfrom on the RS sees the client, replies come from the VIP ----
res=$(in_ns "$NS_CL" timeout 120 "$XE_PY" "$XE_LIB_DIR/nattun_udp_client.py" "$VIP" 53 1000) ||
    fail "UDP through the tunnel: $res"
assert_eq "ok 1000 0" "$res" "1000 datagrams answered, every answer from $VIP:53"
peers=$(cut -d: -f1 "$XE_TMP/udp_peers.log" | sort | uniq -c)
echo "$peers" >&2
assert_ge "$(grep -c "^$CLIENT_IP:" "$XE_TMP/udp_peers.log")" 1000 "RS recvfrom saw $CLIENT_IP"
assert_eq 0 "$(grep -vc "^$CLIENT_IP:" "$XE_TMP/udp_peers.log")" "RS recvfrom saw no other peer"

# ---- TCP: 200 curls, nginx logs the client itself ----
ok=0
for ((i = 0; i < 200; i++)); do
    [[ $(http_get "http://$VIP/") == rs1 ]] && ok=$((ok + 1))
done
assert_eq 200 "$ok" "200 curls answered through the tunnel"
assert_eq 200 "$(count_lines "$CLIENT_IP" "$XE_TMP/rs1/access.log")" "nginx \$remote_addr = $CLIENT_IP for 200 requests"
assert_eq "$CLIENT_IP" "$(peers_of 1)" "nginx saw no other peer"

# ---- 20 MB download, byte-identical (MSS lowered by the tunnel overhead) ----
in_ns "$NS_CL" curl -s --max-time 60 -o "$XE_TMP/got.bin" "http://$VIP/big.bin" || fail "download"
assert_eq "$(sha256sum <"$XE_TMP/big.bin")" "$(sha256sum <"$XE_TMP/got.bin")" "20 MB download byte-identical"

# ---- SYN proxy on NatTun (VIP:81): the cookie handshake at the director, the RS's SYN and
# SYN-ACK in the tunnel, seq/ack translated for the life of the conn; nginx still logs the client
before=$(count_lines "$CLIENT_IP" "$XE_TMP/rs1/access.log")
ok=0
for ((i = 0; i < 50; i++)); do
    [[ $(http_get "http://$VIP:81/") == rs1 ]] && ok=$((ok + 1))
done
assert_eq 50 "$ok" "50 curls answered through the tunnel with syn_proxy"
in_ns "$NS_CL" curl -s --max-time 60 -o "$XE_TMP/got81.bin" "http://$VIP:81/big.bin" ||
    fail "download through syn_proxy"
assert_eq "$(sha256sum <"$XE_TMP/big.bin")" "$(sha256sum <"$XE_TMP/got81.bin")" "20 MB download through syn_proxy byte-identical"
assert_eq $((before + 51)) "$(count_lines "$CLIENT_IP" "$XE_TMP/rs1/access.log")" "nginx \$remote_addr = $CLIENT_IP for the 51 syn_proxy requests"
assert_eq "$CLIENT_IP" "$(peers_of 1)" "nginx saw no other peer (syn_proxy)"
assert_ge "$(counter synproxy_syn_cookie_sent)" 51 "cookie SYN-ACKs sent for VIP:81"
assert_ge "$(counter synproxy_rs_syn_sent)" 51 "RS SYNs sent in the tunnel"
assert_ge "$(counter synproxy_handover)" 51 "RS SYN-ACKs from the tunnel handed over"
assert_ge "$(counter synproxy_saved_replayed)" 51 "handshake ACKs replayed to the RS"
assert_eq 0 "$(counter synproxy_bad_cookie)" "no bad cookie"
assert_eq 0 "$(counter synproxy_rs_timeout)" "no RS handshake timed out"

# ---- the RS's own ICMP error (port unreachable: nothing listens on 5399) goes back through the
# tunnel (xvs-rs egress) and reaches the client from the VIP: its connected socket is refused
res=$(in_ns "$NS_CL" "$XE_PY" -c "
import socket; s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); s.settimeout(3)
s.connect(('$VIP', 54)); s.send(b'x')
try:
    s.recv(100); print('answered')
except ConnectionRefusedError:
    print('refused')
except socket.timeout:
    print('timeout')") || fail "UDP to a closed RS port: $res"
assert_eq refused "$res" "the RS's port unreachable reaches the client through the tunnel"
assert_ge "$(counter icmp_related_forwarded)" 1 "the port unreachable translated for the client"

# ---- the RS's own traffic is untouched: the router reaches it directly ----
assert_eq rs1 "$(in_ns "$NS_RT" curl -s --max-time 2 "http://$RS:8080/")" "non-tunnel HTTP to the RS"
res=$(in_ns "$NS_RT" "$XE_PY" -c "
import socket; s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); s.settimeout(2)
s.sendto(b'plain', ('$RS', 5353)); d, p = s.recvfrom(100); print(d.decode(), p[0])") ||
    fail "non-tunnel UDP to the RS"
assert_eq "rs1 plain $RS" "$res" "non-tunnel UDP answered from the RS itself, unwrapped"

stats=$(in_ns "$NS_RS1" "$BUILD/xvs-rs" stats --dev rs0) || fail "xvs-rs stats: $stats"
echo "$stats" >&2
st() { awk -v k="$1" '$1 == k { print $2 }' <<<"$stats"; }
assert_ge "$(st tunnel_in_decap)" 1000 "tunnel_in_decap"
assert_ge "$(st tunnel_out_encap)" 1000 "tunnel_out_encap"
assert_ge "$(st tunnel_out_other)" 2 "tunnel_out_other (the router's requests' replies)"
assert_eq 0 "$(st tunnel_out_fail)" "tunnel_out_fail"
assert_eq 0 "$(st tunnel_out_too_big)" "tunnel_out_too_big"
assert_eq 0 "$(st tunnel_in_malformed)" "tunnel_in_malformed"
assert_ge "$(counter tunnel_decap)" 1000 "xvsd tunnel_decap"
assert_eq 0 "$(counter drop_nattun_bare_reply)" "no reply outside the tunnel"
assert_eq 0 "$(counter drop_tunnel_no_conn)" "every tunnelled packet was a conn's reply"
assert_ge "$(counter nattun_mss_clamped)" 400 "MSS lowered in SYN and SYN-ACK"

out=$(in_ns "$NS_RS1" "$BUILD/xvs-rs" tunnel --dev rs0 --detach) || fail "xvs-rs tunnel --detach: $out"
assert_not_contains "$(tc -n "$NS_RS1" filter show dev rs0 egress)" "xvs_rt_egress" "detached"
log "done"
