#!/usr/bin/env bash
# Path-MTU discovery through the director, FNAT and NAT: a far client sits behind a router (the
# client namespace) whose link towards it has MTU 1400 while the far client's own interface
# has 1500, so its SYN advertises MSS 1460 and the RS's full-size segments do not fit. The
# router answers them with ICMP frag-needed to the VIP; the director must translate that
# error to the RS (inner tuple VIP->client becomes RS->LIP or RS->client), the RS lowers its
# path MTU and a 20 MB download completes intact. Without the translation it stalls.
source "$(dirname "$0")/lib.sh"
e2e_init "${1:-build}"
need_tools sha256sum

FAR_IP=10.10.4.2
topo_up 2
NS_FAR=$XE-far
add_ns "$NS_FAR"
ip link add far0 netns "$NS_FAR" type veth peer name cl-far netns "$NS_CL" || fail "veth far"
ip -n "$NS_CL" addr add 10.10.4.1/24 dev cl-far
ip -n "$NS_CL" link set cl-far mtu 1400 up
no_offloads "$NS_CL" cl-far
ip -n "$NS_FAR" addr add "$FAR_IP/24" dev far0
ip -n "$NS_FAR" link set far0 mtu 1500 up
ip -n "$NS_FAR" route add default via 10.10.4.1
no_offloads "$NS_FAR" far0
in_ns "$NS_CL" sysctl -qw net.ipv4.ip_forward=1
for i in 1 2; do start_rs_http "$i"; done
want=$(sha256sum <"$XE_TMP/big.bin" | cut -d' ' -f1)

for kind in FNAT NAT; do
    conf=$XE_TMP/xvs-$kind.conf
    {
        XE_IP_EXTRA="    route 10.10.4.0/24 via 10.10.1.2 dev wan0" config_head
        vs_block TCP "$VIP" 80 "1:8080:1 2:8080:1" rr "$kind"
    } >"$conf"
    start_xvsd "$conf"
    for i in 1 2; do # the RS forget what an earlier round learned
        in_ns "$(ns_rs "$i")" ip route flush cache
    done
    for k in 1 2; do
        in_ns "$NS_FAR" curl -s --max-time 40 -H "Connection: close" -o "$XE_TMP/dl" \
            "http://$VIP/big.bin"
        got=$(sha256sum <"$XE_TMP/dl" | cut -d' ' -f1)
        assert_eq "$want" "$got" "$kind: sha256 of a 20 MB download $k through an MTU-1400 hop"
    done
    related=$(counter icmp_related_forwarded)
    assert_ge "${related:-0}" 1 "$kind: ICMP errors related to a conn, translated and forwarded"
    stop_xvsd
done
