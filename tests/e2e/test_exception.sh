#!/usr/bin/env bash
# The exception path (issue 13): the director's kernel has its own addresses on both links
# (10.10.1.9/24 toward the client, 10.10.2.9/24 toward the RS) and reaches the network
# through xvs's ports while xvs forwards VIP traffic. net_af_xdp: the addresses sit on
# lb-wan/lb-lan and xvs's XDP program passes the kernel's frames to it; net_af_packet: on the
# TAPs `exception tap xe-wan|xe-lan` creates. Checks, with 200 curls to the VIP in flight:
# (a) ping from the kernel to an RS; (b) TCP from the kernel to an RS echo service and from the
# client to a TCP echo in the kernel; (c) every curl answered; (d) IPv6 ping from the kernel's
# own IPv6 address to an RS; and the exc_* counters.
source "$(dirname "$0")/lib.sh"
e2e_init "${1:-build}"
need_tools ping

topo_up 2
start_rs_http 1
start_rs_http 2
start_rs_echo 1 7000
pmd=${XE_PMD:-af_xdp}
conf=$XE_TMP/xvs.conf
{
    if [[ $pmd == af_packet ]]; then
        # The TAPs carry the kernel's traffic: `exception tap NAME` in each port block.
        config_head | sed -e 's|\(port wan0 { dev [^ ]*\) }|\1 exception tap xe-wan }|' \
            -e 's|\(port lan0 { dev [^ ]*\) }|\1 exception tap xe-lan }|'
    else
        config_head # net_af_xdp: the XDP exception path is the default
    fi
    vs_block TCP "$VIP" 80 "1:8080:1 2:8080:1" rr
} >"$conf"
grep -n "port " "$conf" >&2
if [[ $pmd == af_packet ]]; then
    wan_if=xe-wan
    lan_if=xe-lan
else
    wan_if=lb-wan
    lan_if=lb-lan
fi
start_xvsd "$conf"
assert_contains "$(cat "$XVSD_LOG")" "exception path through" "xvsd set the exception path up"
ip -n "$NS_LB" link show "$lan_if" >/dev/null 2>&1 || fail "no interface $lan_if in $NS_LB"
ip -n "$NS_LB" addr add 10.10.1.9/24 dev "$wan_if" || fail "kernel address on $wan_if"
ip -n "$NS_LB" addr add 10.10.2.9/24 dev "$lan_if" || fail "kernel address on $lan_if"
ip -n "$NS_LB" link set "$wan_if" up
ip -n "$NS_LB" link set "$lan_if" up
sleep 1 # xvsd's XDP address map learns the kernel's addresses within ~200 ms
bg_ns "$NS_LB" "$XE_TMP/kecho.out" socat TCP4-LISTEN:2222,bind=10.10.1.9,reuseaddr,fork PIPE
wait_until 5 in_ns "$NS_LB" bash -c 'exec 3<>/dev/tcp/10.10.1.9/2222' ||
    fail "kernel TCP echo did not start"

# VIP traffic in the background while the kernel talks.
http_loop 200 "$XE_TMP/curls.txt" "http://$VIP/" 90 &
loop_pid=$!
XE_PIDS+=("$loop_pid")

# (a) ping from the kernel's LAN address to RS 1.
out=$(in_ns "$NS_LB" ping -c 5 -i 0.2 -W 1 -I 10.10.2.9 "$(rs_ip 1)" 2>&1)
echo "$out" >&2
assert_contains "$out" " 0% packet loss" "ping from the director's kernel to rs1"
# (b) TCP from the kernel to the RS echo, and from the client to the kernel's echo.
got=$(in_ns "$NS_LB" timeout 5 socat -T 3 - "TCP4:$(rs_ip 1):7000,bind=10.10.2.9" <<<"hello-rs" 2>&1)
assert_eq "hello-rs" "$got" "kernel -> rs1:7000 TCP echo"
got=$(in_ns "$NS_CL" timeout 5 socat -T 3 - "TCP4:10.10.1.9:2222" <<<"hello-kernel" 2>&1)
assert_eq "hello-kernel" "$got" "client -> kernel 10.10.1.9:2222 TCP echo"
# A longer session (ssh-like: many small writes both ways) from the client.
got=$(in_ns "$NS_CL" timeout 10 bash -c 'for i in $(seq 1 50); do echo "line $i"; sleep 0.02; done |
    socat -T 3 - TCP4:10.10.1.9:2222' | wc -l)
assert_eq 50 "$got" "client <-> kernel session, 50 lines echoed"
# The kernel's own ARP: the RS learned the kernel's address on the LAN.
nb=$(ip -n "$(ns_rs 1)" neigh show 10.10.2.9)
assert_contains "$nb" "lladdr" "rs1 resolved the kernel's 10.10.2.9"

# IPv6: the kernel's 2001:db8:2::9 (ND both ways through the exception path) pings RS 1's
# 2001:db8:2::2 (nodad: no 1 s wait for duplicate address detection).
in_ns "$NS_LB" sysctl -qw net.ipv6.conf.all.disable_ipv6=0 "net.ipv6.conf.$lan_if.disable_ipv6=0"
ip -n "$NS_LB" -6 addr add 2001:db8:2::9/64 dev "$lan_if" nodad || fail "kernel IPv6 address"
ip -n "$(ns_rs 1)" -6 addr add 2001:db8:2::2/64 dev rs0 nodad || fail "rs1 IPv6 address"
sleep 0.5
out=$(in_ns "$NS_LB" ping -6 -c 3 -i 0.2 -W 1 -I 2001:db8:2::9 2001:db8:2::2 2>&1)
echo "$out" >&2
assert_contains "$out" " 0% packet loss" "IPv6 ping from the director's kernel to rs1"

# An address xvs gains at run time (xvsctl addr add) is xvs's at once, one it drops is not:
# on af_xdp this is the XDP program's map following the change.
xvsctl_ns addr add 10.10.2.20/24 dev lan0 || fail "xvsctl addr add"
sleep 0.5
out=$(in_ns "$(ns_rs 1)" ping -c 2 -i 0.2 -W 1 10.10.2.20 2>&1)
assert_contains "$out" " 0% packet loss" "xvs answers for 10.10.2.20 after xvsctl addr add"
xvsctl_ns addr del 10.10.2.20/24 dev lan0 || fail "xvsctl addr del"
ip -n "$(ns_rs 1)" neigh flush dev rs0
sleep 0.5
out=$(in_ns "$(ns_rs 1)" ping -c 2 -i 0.2 -W 1 10.10.2.20 2>&1)
assert_contains "$out" "100% packet loss" "nobody answers for 10.10.2.20 after xvsctl addr del"

wait "$loop_pid"
ok=$(($(count_lines rs1 "$XE_TMP/curls.txt") + $(count_lines rs2 "$XE_TMP/curls.txt")))
assert_eq 200 "$ok" "curls to the VIP answered while the kernel talked"
assert_ge "$(count_lines rs1 "$XE_TMP/curls.txt")" 50 "rs1 served"
assert_ge "$(count_lines rs2 "$XE_TMP/curls.txt")" 50 "rs2 served"

stats=$(xvsctl_ns stats -a)
c() { awk -v k="$1" '{ for (i = 1; i < NF; i++) if ($i == k || $i == k ":") { print $(i + 1); exit } }' <<<"$stats"; }
log "exc_to_kernel=$(c exc_to_kernel) exc_from_kernel=$(c exc_from_kernel) drop_exc_full=$(c drop_exc_full) drop_not_local=$(c drop_not_local)"
if [[ $pmd == af_packet ]]; then
    assert_ge "$(c exc_to_kernel)" 10 "frames handed to the kernel through the TAP"
    assert_ge "$(c exc_from_kernel)" 10 "frames the kernel sent through the TAP"
else
    # The XDP program passed the kernel's frames before xvs saw them.
    assert_eq 0 "$(c exc_to_kernel)" "af_xdp: nothing reaches the kernel through xvs"
    assert_le "$(c drop_not_local)" 0 "af_xdp: no kernel frame reached xvs"
fi
assert_eq 0 "$(c drop_exc_full)" "drop_exc_full"

stop_xvsd
assert_eq 0 "$XVSD_STATUS" "xvsd exit status"
pass "exception path on $pmd"
