#!/usr/bin/env bash
# IPv6 (issue 11) with real Linux stacks on both sides, on every PMD:
#   - neighbour discovery: the client resolves the VIP and pings it (ICMPv6 echo from xvs);
#   - FNAT66: curl -6 to [2001:db8:1::100]:80 -> IPv6 local addresses -> nginx on the RS'
#     IPv6 addresses: 40 requests over both RS, the RS see only local addresses; a 20 MB
#     download byte-identical;
#   - NAT66: [2001:db8:1::101]:80 -> nginx, the RS see the client's own IPv6 address; 20 MB;
#   - FNAT64: [2001:db8:1::164]:80 -> IPv4 local addresses -> nginx on IPv4, `toa on`: every
#     request answered, a capture at the RS shows the 20-byte TOA (kind 254, the client's
#     IPv6 address and port); 20 MB;
#   - PROXY protocol for IPv6 clients: FNAT64 [2001:db8:1::165]:80 with `proxy_protocol v2` and
#     FNAT66 [2001:db8:1::100]:81 with `proxy_protocol v1` to nginx `listen ... proxy_protocol`:
#     every request logged with $proxy_protocol_addr = the client's IPv6 address;
#   - the SYN proxy for IPv6 clients ([2001:db8:1::100]:82 FNAT66, [2001:db8:1::165]:82 FNAT64):
#     40 requests each, every one through a cookie handover; 20 MB through FNAT64;
#   - UDP over IPv6 through FNAT66 (200 exchanges, both RS), and 4000-byte datagrams (sent in
#     fragments by the client's kernel) echoed through the IPv6 and the IPv4 UDP VIP (xvs
#     reassembles the IPv6 ones; on af_packet the kernel reassembles the IPv4 ones and the
#     8192-byte frames set here hold them, see test_fragments.sh);
#   - DR over IPv6: the RS (VIP on lo) answer over the client's second leg: 40 requests, the
#     RS see the client's address, 20 MB, no reply passes the director.
source "$(dirname "$0")/lib.sh"
# af_packet: frames large enough for the kernel's reassembled 4000-byte IPv4 datagrams.
export XE_AF_PACKET_ARGS=framecnt=1024,framesz=8192,blocksz=8192,qdisc_bypass=1
e2e_init "${1:-build}"
need_tools sha256sum tcpdump ping

V6_CL=2001:db8:1::2
VIP66=2001:db8:1::100
VIP_NAT=2001:db8:1::101
VIP64=2001:db8:1::164
VIP64PP=2001:db8:1::165
VIP_DR=2001:db8:1::102
rs6() { echo "2001:db8:2::$(($1 + 1))"; }

topo_up 2
ip -n "$NS_CL" addr add "$V6_CL/64" dev cl0 nodad
ip -n "$NS_CL" -6 route add default via 2001:db8:1::1
for i in 1 2; do
    ns=$(ns_rs "$i")
    ip -n "$ns" addr add "$(rs6 "$i")/64" dev rs0 nodad
    ip -n "$ns" -6 route add default via 2001:db8:2::1
    # The DR VIP on lo (IPv6 ND answers only for the receiving interface's addresses, so
    # nothing like arp_ignore is needed).
    ip -n "$ns" addr add "$VIP_DR/128" dev lo
    XE_RS_LISTEN="[$(rs6 "$i")]:8080 $(rs_ip "$i"):8080 [$VIP_DR]:80" start_rs_http "$i"
    bg_ns "$ns" "$XE_TMP/udp6_$i.out" "$XE_PY" "$XE_LIB_DIR/udp_echo.py" "$(rs6 "$i")" 5353 "rs$i "
done
start_rs_udp 1
start_rs_udp 2
# nginx with proxy_protocol listeners beside the plain one: IPv4 :8082 (FNAT64, v2) and IPv6
# :8083 (FNAT66, v1), logging the address the header carries.
for i in 1 2; do
    dir=$XE_TMP/pp$i
    mkdir -p "$dir/tmp"
    cat >"$dir/nginx.conf" <<EOF
daemon off;
master_process off;
worker_processes 1;
pid $dir/nginx.pid;
error_log $dir/error.log warn;
events { worker_connections 1024; }
http {
    client_body_temp_path $dir/tmp/body;
    proxy_temp_path $dir/tmp/proxy;
    fastcgi_temp_path $dir/tmp/fastcgi;
    uwsgi_temp_path $dir/tmp/uwsgi;
    scgi_temp_path $dir/tmp/scgi;
    log_format pp '\$proxy_protocol_addr \$remote_addr';
    access_log $dir/pp.log pp;
    server {
        listen $(rs_ip "$i"):8082 proxy_protocol;
        listen [$(rs6 "$i")]:8083 proxy_protocol;
        location / { default_type text/plain; return 200 "pp$i\n"; }
    }
}
EOF
    : >"$dir/pp.log"
    bg_ns "$(ns_rs "$i")" "$dir/nginx.out" nginx -c "$dir/nginx.conf"
done

conf=$XE_TMP/xvs.conf
{
    XE_IP_EXTRA="    address 2001:db8:1::1/64 dev wan0
    address 2001:db8:2::1/64 dev lan0" config_head
    cat <<EOF
local_address_group lips6 {
    2001:db8:2::100-103 lan0
}
virtual_server $VIP66 80 {
    protocol TCP
    lb_algo rr
    lb_kind FNAT
    laddr_group_name lips6
    real_server $(rs6 1) 8080 { weight 1 }
    real_server $(rs6 2) 8080 { weight 1 }
}
virtual_server $VIP66 53 {
    protocol UDP
    lb_algo rr
    lb_kind FNAT
    laddr_group_name lips6
    real_server $(rs6 1) 5353 { weight 1 }
    real_server $(rs6 2) 5353 { weight 1 }
}
virtual_server $VIP_NAT 80 {
    protocol TCP
    lb_algo rr
    lb_kind NAT
    real_server [$(rs6 1)] 8080 { weight 1 }
    real_server [$(rs6 2)] 8080 { weight 1 }
}
virtual_server $VIP_DR 80 {
    protocol TCP
    lb_algo rr
    lb_kind DR
    real_server $(rs6 1) 80 { weight 1 }
    real_server $(rs6 2) 80 { weight 1 }
}
virtual_server $VIP64PP 80 {
    protocol TCP
    lb_algo rr
    lb_kind FNAT
    laddr_group_name lips
    proxy_protocol v2
    real_server $(rs_ip 1) 8082 { weight 1 }
    real_server $(rs_ip 2) 8082 { weight 1 }
}
virtual_server $VIP66 82 {
    protocol TCP
    lb_algo rr
    lb_kind FNAT
    syn_proxy
    laddr_group_name lips6
    real_server $(rs6 1) 8080 { weight 1 }
    real_server $(rs6 2) 8080 { weight 1 }
}
virtual_server $VIP64PP 82 {
    protocol TCP
    lb_algo rr
    lb_kind FNAT
    syn_proxy
    laddr_group_name lips
    real_server $(rs_ip 1) 8080 { weight 1 }
    real_server $(rs_ip 2) 8080 { weight 1 }
}
virtual_server $VIP66 81 {
    protocol TCP
    lb_algo rr
    lb_kind FNAT
    laddr_group_name lips6
    proxy_protocol v1
    real_server $(rs6 1) 8083 { weight 1 }
    real_server $(rs6 2) 8083 { weight 1 }
}
virtual_server $VIP64 80 {
    protocol TCP
    lb_algo rr
    lb_kind FNAT
    laddr_group_name lips
    toa on
    real_server $(rs_ip 1) 8080 { weight 1 }
    real_server $(rs_ip 2) 8080 { weight 1 }
}
EOF
    vs_block UDP "$VIP" 53 "1:5353:1 2:5353:1" rr
} >"$conf"
start_xvsd "$conf"

# ND and echo: the client resolves the VIP through xvs and gets its ping answered.
in_ns "$NS_CL" ping -6 -c 3 -i 0.2 -W 1 "$VIP66" >"$XE_TMP/ping6" 2>&1 || fail "ping6 VIP: $(cat "$XE_TMP/ping6")"
neigh=$(in_ns "$NS_CL" ip -6 neigh show "$VIP66")
assert_contains "$neigh" "lladdr" "the client's neighbour entry for the VIP"
pass "ND and ICMPv6 echo for the VIP"

# loop6 URL N OUT: N short curl -6 requests, one line each (body or ERRn).
loop6() {
    in_ns "$NS_CL" timeout 60 bash -c '
        for ((k = 0; k < $2; k++)); do
            body=$(curl -6 -s --max-time 2 -H "Connection: close" "$1"); rc=$?
            if ((rc == 0)) && [[ -n $body ]]; then echo "$body"; else echo "ERR$rc"; fi
        done' _ "$1" "$2" >"$3"
}
download6() { # URL WHAT
    local want got
    want=$(sha256sum <"$XE_TMP/big.bin" | cut -d' ' -f1)
    rm -f "$XE_TMP/dl"
    in_ns "$NS_CL" curl -6 -s --max-time 30 -H "Connection: close" -o "$XE_TMP/dl" "$1"
    got=$(sha256sum <"$XE_TMP/dl" 2>/dev/null | cut -d' ' -f1)
    assert_eq "$want" "$got" "sha256 of a 20 MB download ($2)"
}
clear_logs() { for i in 1 2; do : >"$XE_TMP/rs$i/access.log"; done; }
split_check() { # OUT WHAT
    local n1 n2
    n1=$(count_lines rs1 "$1")
    n2=$(count_lines rs2 "$1")
    log "$2: rs1 $n1, rs2 $n2, errors $(grep -c '^ERR' "$1")"
    assert_eq 40 $((n1 + n2)) "$2: requests answered of 40"
    assert_ge "$n1" 15 "$2: rs1 share"
    assert_ge "$n2" 15 "$2: rs2 share"
}

# FNAT66
clear_logs
loop6 "http://[$VIP66]/" 40 "$XE_TMP/fnat66"
split_check "$XE_TMP/fnat66" FNAT66
peers=$(cat "$XE_TMP"/rs1/access.log "$XE_TMP"/rs2/access.log | sort -u | tr '\n' ' ')
log "FNAT66 peers: $peers"
for p in $peers; do
    [[ $p == 2001:db8:2::10[0-3] ]] || fail "FNAT66: the RS saw $p, not a local address"
done
download6 "http://[$VIP66]/big.bin" FNAT66

# NAT66: the RS see the client's own address.
clear_logs
loop6 "http://[$VIP_NAT]/" 40 "$XE_TMP/nat66"
split_check "$XE_TMP/nat66" NAT66
for i in 1 2; do
    assert_eq "$V6_CL" "$(peers_of "$i" | tr '\n' ' ' | sed 's/ $//')" "NAT66: peers rs$i saw"
done
download6 "http://[$VIP_NAT]/big.bin" NAT66

# FNAT64 with TOA: capture at rs1, then check the option on the wire.
clear_logs
bg_ns "$(ns_rs 1)" "$XE_TMP/cap64.out" timeout 60 tcpdump -n -i rs0 -U --immediate-mode -w "$XE_TMP/rs1_64.pcap" "tcp port 8080 and ip"
cap=$BG_PID
# tcpdump writes the file header once it listens.
wait_until 10 test -s "$XE_TMP/rs1_64.pcap" || fail "tcpdump at rs1 did not start"
sleep 0.3
loop6 "http://[$VIP64]/" 40 "$XE_TMP/fnat64"
split_check "$XE_TMP/fnat64" FNAT64
sleep 0.5
kill -INT "$cap" 2>/dev/null
wait "$cap" 2>/dev/null
peers=$(cat "$XE_TMP"/rs1/access.log "$XE_TMP"/rs2/access.log | sort -u | tr '\n' ' ')
for p in $peers; do
    [[ $p == 10.10.2.10[0-3] ]] || fail "FNAT64: the RS saw $p, not an IPv4 local address"
done
toa=$("$XE_PY" - "$XE_TMP/rs1_64.pcap" "$V6_CL" <<'PY'
import ipaddress, sys
from scapy.all import IP, TCP, rdpcap
want = ipaddress.IPv6Address(sys.argv[2]).packed
seen = good = 0
for p in rdpcap(sys.argv[1]):
    if IP not in p or TCP not in p or p[TCP].dport != 8080:
        continue
    raw = bytes(p[TCP])[20:p[TCP].dataofs * 4]
    if len(raw) >= 20 and raw[0] == 254:
        seen += 1
        good += raw[1] == 20 and raw[4:20] == want
print(seen, good)
PY
)
read -r toa_seen toa_good <<<"$toa"
log "toa_inserted $(counter toa_inserted), $(tcpdump -n -r "$XE_TMP/rs1_64.pcap" 2>/dev/null | wc -l) packets captured at rs1"
log "FNAT64 TOA options at rs1: $toa_seen, with the client's IPv6 address: $toa_good"
assert_ge "${toa_seen:-0}" 1 "FNAT64: TOA options seen at rs1"
assert_eq "$toa_seen" "$toa_good" "FNAT64: every TOA is the 20-byte form with $V6_CL"
download6 "http://[$VIP64]/big.bin" FNAT64

# PROXY protocol for IPv6 clients: nginx logs the client's IPv6 address from the header and a
# local address as the peer (v2 over FNAT64: IPv4; v1 over FNAT66: IPv6).
pp_check() { # URL WHAT PEER_GLOB
    local i n=0 bad
    for i in 1 2; do : >"$XE_TMP/pp$i/pp.log"; done
    loop6 "$1" 40 "$XE_TMP/pp.out"
    assert_eq 0 "$(grep -c '^ERR' "$XE_TMP/pp.out")" "$2: failed requests of 40"
    sleep 0.3
    for i in 1 2; do
        n=$((n + $(wc -l <"$XE_TMP/pp$i/pp.log")))
        assert_ge "$(wc -l <"$XE_TMP/pp$i/pp.log")" 15 "$2: requests at rs$i"
    done
    assert_eq 40 "$n" "$2: requests nginx logged"
    # shellcheck disable=SC2254 # $3 is a glob on purpose
    bad=$(cat "$XE_TMP"/pp1/pp.log "$XE_TMP"/pp2/pp.log | while read -r addr peer; do
        case "$addr/$peer" in "$V6_CL"/$3) ;; *) echo "$addr/$peer" ;; esac
    done | sort -u | head -n 3 | tr '\n' ' ')
    [[ -z $bad ]] || fail "$2: logged proxy_protocol_addr/remote_addr not $V6_CL/$3: $bad"
    log "$2: 40 requests, nginx logged $V6_CL from the PROXY header"
}
pp_check "http://[$VIP64PP]/" "FNAT64 PROXY v2" "10.10.2.10[0-3]"
pp_check "http://[$VIP66]:81/" "FNAT66 PROXY v1" "2001:db8:2::10[0-3]"

# The SYN proxy for IPv6 clients: FNAT66 and FNAT64, every handshake through a cookie.
for vip in "$VIP66" "$VIP64PP"; do
    before=$(counter synproxy_handover)
    clear_logs
    loop6 "http://[$vip]:82/" 40 "$XE_TMP/sp6"
    split_check "$XE_TMP/sp6" "SYN proxy to [$vip]:82"
    assert_eq 40 $(($(counter synproxy_handover) - ${before:-0})) "SYN proxy handovers for [$vip]:82"
done
download6 "http://[$VIP64PP]:82/big.bin" "FNAT64 with the SYN proxy"

# UDP over IPv6, small and fragmented (4000 bytes over MTU 1500), and fragmented over IPv4.
res=$(in_ns "$NS_CL" timeout 30 "$XE_PY" "$XE_LIB_DIR/udp_client.py" "$VIP66" 53 200 10 20) ||
    fail "udp6 client: $res"
log "UDP6: $(tr '\n' ' ' <<<"$res")"
assert_ge "$(awk '$1 == "sent" { print $4 }' <<<"$res")" 198 "UDP over IPv6 answered of 200"
assert_contains "$res" "rs1 " "UDP6 answers from rs1"
assert_contains "$res" "rs2 " "UDP6 answers from rs2"
for vip in "$VIP66" "$VIP"; do
    res=$(in_ns "$NS_CL" timeout 30 "$XE_PY" "$XE_LIB_DIR/udp_client.py" "$vip" 53 20 2 20 4000) ||
        fail "udp client ($vip, 4000 bytes): $res"
    log "UDP 4000 bytes to $vip: $(tr '\n' ' ' <<<"$res")"
    assert_ge "$(awk '$1 == "sent" { print $4 }' <<<"$res")" 19 "4000-byte datagrams to $vip answered of 20"
done
assert_ge "$(counter frag_reassembled)" 2 "frag_reassembled"

# DR over IPv6: the RS answer the client directly over a second client leg on their LAN
# (routes to the client subnet through it, added only now: NAT66 above needed the director).
ip link add cl-lan netns "$NS_CL" type veth peer name sw-cl netns "$NS_SW" || fail "veth cl-lan"
ip -n "$NS_SW" link set sw-cl master br0 up
no_offloads "$NS_SW" sw-cl
ip -n "$NS_CL" addr add 2001:db8:2::50/64 dev cl-lan nodad
ip -n "$NS_CL" link set cl-lan up
no_offloads "$NS_CL" cl-lan
for i in 1 2; do
    ip -n "$(ns_rs "$i")" -6 route add 2001:db8:1::/64 via 2001:db8:2::50 dev rs0 || fail "rs$i route"
done
clear_logs
bg_ns "$NS_CL" "$XE_TMP/capdr.out" timeout 60 tcpdump -n -i cl0 -U --immediate-mode -w "$XE_TMP/cl0_dr.pcap" "ip6 and tcp and src host $VIP_DR"
cap=$BG_PID
wait_until 10 test -s "$XE_TMP/cl0_dr.pcap" || fail "tcpdump at the client did not start"
loop6 "http://[$VIP_DR]/" 40 "$XE_TMP/dr6"
split_check "$XE_TMP/dr6" DR6
for i in 1 2; do
    assert_eq "$V6_CL" "$(peers_of "$i" | tr '\n' ' ' | sed 's/ $//')" "DR6: peers rs$i saw"
done
download6 "http://[$VIP_DR]/big.bin" DR6
sleep 0.3
kill -INT "$cap" 2>/dev/null
wait "$cap" 2>/dev/null
assert_eq 0 "$(tcpdump -n -r "$XE_TMP/cl0_dr.pcap" 2>/dev/null | wc -l)" \
    "DR6: TCP packets from the VIP on the director-facing client interface"
pass "IPv6: ND, FNAT66, NAT66, FNAT64 with TOA, PROXY v1/v2 and the SYN proxy for IPv6 clients, UDP and fragments, DR"
