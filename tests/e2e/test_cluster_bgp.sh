#!/usr/bin/env bash
# ECMP over BGP through BIRD 2 (issue 15 item 1): a router namespace runs BIRD with an eBGP
# session to each director's BIRD (each in its director's namespace, speaking from the
# director's kernel address through xvs's exception path); xvsd writes its BIRD's protocol and
# static-route file and reloads it over BIRD's control socket. The router's kernel protocol
# merges paths, so Linux installs a multipath route to each VIP. Checked:
#   - both next hops (the directors' next_hop addresses 10.10.1.11 and 10.10.1.12) in the
#     router's route for each VIP, and `xvsctl announce show` / xvs_route_announced say so;
#   - 50 client addresses x 2 requests to VIP 1 (lb_algo mh): every request answered, and both
#     directors' counters see conns (the router spreads by L4 hash);
#   - the real servers of VIP 2 stopped (TCP_CHECK fails) -> VIP 2 withdrawn by both
#     directors (gone from the router) while VIP 1 stays; started again -> back;
#   - xvsadm -D of VIP 2 on director 1 -> withdrawn there; xvsadm --reload -> back;
#   - kill -9 of director 2 -> its next hop leaves the multipath routes within 5 s and VIP 1
#     still answers through director 1. Two mechanisms, one per PMD: the liveness TAP goes with
#     the process and director 2's BIRD drops the static routes through it (checked on both;
#     on af_xdp the kernel keeps lb-wan, the BGP session stays up and sends the withdrawal);
#     on af_packet the session itself ran through xvsd's exception TAP, so it dies with xvsd
#     and the router's BFD (on in both BIRDs) ends it within a second, not the 60 s hold time;
#   - director 2 restarted -> back in the routes; SIGTERM of director 1 -> withdrawn before
#     it exits (logged "withdraw ... xvsd stopping").
source "$(dirname "$0")/lib.sh"
e2e_init "${1:-build}"
need_tools curl bird birdc

VIP1=10.10.1.100
VIP2=10.10.1.101
cluster_up 4 router
for i in 1 2 3 4; do start_rs_http "$i"; done

write_conf_d() {
    local d=$1
    {
        config_head_d "$d"
        cat <<EOF
bgp_defs {
    bird_socket $XE_TMP/bird$d.ctl
    bird_config $XE_TMP/bird-xvs$d.conf
    router_id 10.10.1.2$d
    local_as 65001
    neighbor 10.10.1.254 remote_as 65000 hold_time 60 bfd
    source_address 10.10.1.2$d
    next_hop 10.10.1.1$d
    community 65001:$d
    med 10
}
EOF
        vs_block_checked "$VIP1" 1 2
        vs_block_checked "$VIP2" 3 4
    } >"$XE_TMP/xvs$d.conf"
}

# The router: eBGP with BFD to both directors (lib.sh start_router_bird).
start_router_bird ""

for d in 1 2; do
    write_conf_d "$d"
    start_director "$d" "$XE_TMP/xvs$d.conf"
    director_kernel_up "$d"
    start_bird_d "$d"
done

# hops VIP : the router's next hops for VIP, sorted, space-separated ("" when no route).
hops() { route_hops "$1"; }
wait_hops() { # VIP EXPECTED SECONDS WHAT
    local deadline=$((SECONDS + $3))
    while [[ $(hops "$1") != "$2" ]] && ((SECONDS < deadline)); do sleep 0.2; done
    [[ $(hops "$1") == "$2" ]] || fail "$4: router's route to $1 is '$(hops "$1")', expected '$2' ($(ip -n "$NS_RT" route show "$1")); router BIRD: $(birdc -s "$XE_TMP/bird-rt.ctl" show protocols 2>&1 | tail -n 3)"
}

wait_hops "$VIP1" "10.10.1.11 10.10.1.12" 40 "both directors announce VIP 1"
wait_hops "$VIP2" "10.10.1.11 10.10.1.12" 10 "both directors announce VIP 2"
pass "multipath routes on the router: $(ip -n "$NS_RT" route show "$VIP1" | tr '\n' ' ')"
birdc -s "$XE_TMP/bird-rt.ctl" show route "$VIP1/32" all >"$XE_TMP/rt-route" 2>&1
assert_contains "$(cat "$XE_TMP/rt-route")" "(65001,1)" "director 1's community on the router"
assert_contains "$(cat "$XE_TMP/rt-route")" "BGP.med: 10" "the MED on the router"
show=$(xvsctl_d 1 announce show)
assert_contains "$show" "$VIP1" "xvsctl announce show lists VIP 1"
assert_eq 2 "$(grep -c 'announced  yes' <<<"$show")" "both VIPs announced and in BIRD (director 1)"
in_ns "$(director_ns 1)" curl -s --max-time 3 http://127.0.0.1:9469/metrics >"$XE_TMP/m1"
assert_contains "$(cat "$XE_TMP/m1")" "xvs_route_announced{vip=\"$VIP1\"} 1" "metric of VIP 1"

# conns DIRECTOR : the conns VIP 1's service has had on that director.
conns() { xvsadm_d "$1" -L -n --stats -t "$VIP1:80" | awk -v v="$VIP1:80" '$1 == "TCP" && $2 == v { print $3 }'; }
# shellcheck disable=SC2016
in_ns "$NS_CL" bash -c '
    for a in "$@"; do for k in 1 2; do
        curl -s --max-time 3 --interface "$a" -H "Connection: close" http://'"$VIP1"'/ || echo ERR
    done; done' _ "${CLUSTER_CLIENTS[@]}" >"$XE_TMP/spread"
ok=$(grep -c '^rs[12]$' "$XE_TMP/spread")
assert_eq $((2 * ${#CLUSTER_CLIENTS[@]})) "$ok" "requests from ${#CLUSTER_CLIENTS[@]} client addresses answered"
c1=$(conns 1)
c2=$(conns 2)
assert_ge "${c1:-0}" 10 "director 1's conns of VIP 1 (ECMP share)"
assert_ge "${c2:-0}" 10 "director 2's conns of VIP 1 (ECMP share)"
assert_eq "$ok" $((c1 + c2)) "conns over both directors"
pass "ECMP spread: director 1 $c1 conns, director 2 $c2 conns"

# Quorum: VIP 2's real servers stop -> withdrawn everywhere; VIP 1 untouched.
for i in 3 4; do kill "$(cat "$XE_TMP/rs$i/nginx.pid")"; done
wait_hops "$VIP2" "" 15 "VIP 2 withdrawn when its real servers stopped"
assert_eq "10.10.1.11 10.10.1.12" "$(hops "$VIP1")" "VIP 1 stays announced by both"
grep -q "routing: withdraw $VIP2: " "$(director_log 1)" || fail "director 1 did not log the withdrawal"
pass "VIP 2 withdrawn on quorum loss ($(grep "routing: withdraw $VIP2" "$(director_log 1)" | head -n 1 | sed 's/.*routing: //'))"
for i in 3 4; do
    bg_ns "$(ns_rs "$i")" "$XE_TMP/rs$i/nginx2.out" nginx -c "$XE_TMP/rs$i/nginx.conf"
done
wait_hops "$VIP2" "10.10.1.11 10.10.1.12" 15 "VIP 2 back when its real servers are"
pass "VIP 2 announced again"

# Removal: xvsadm -D of VIP 2 on director 1 withdraws it there; a reload (the file still has
# the service) announces it again.
xvsadm_d 1 -D -t "$VIP2:80" || fail "xvsadm -D on director 1"
wait_hops "$VIP2" "10.10.1.12" 5 "VIP 2 withdrawn by director 1 after xvsadm -D"
grep -q "routing: withdraw $VIP2: no service has it" "$(director_log 1)" ||
    fail "director 1 did not log the withdrawal of the removed VIP"
xvsadm_d 1 --reload || fail "xvsadm --reload on director 1"
wait_hops "$VIP2" "10.10.1.11 10.10.1.12" 10 "VIP 2 back on director 1 after the reload"
pass "VIP 2 withdrawn on removal (xvsadm -D) and announced after a reload"

# kill -9 director 2: the liveness TAP goes with it, and BIRD withdraws at once.
t0=$(date +%s.%N)
stop_director 2 KILL
wait_hops "$VIP1" "10.10.1.11" 5 "director 2's next hop gone after kill -9"
wait_hops "$VIP2" "10.10.1.11" 2 "director 2's next hop gone after kill -9 (VIP 2)"
t1=$(date +%s.%N)
birdc -s "$XE_TMP/bird2.ctl" show route protocol xvs_vips4 >"$XE_TMP/lb2-static" 2>&1
assert_not_contains "$(cat "$XE_TMP/lb2-static")" "$VIP1" "director 2's BIRD dropped its static VIP routes (liveness TAP gone)"
birdc -s "$XE_TMP/bird-rt.ctl" show protocols lb2 >"$XE_TMP/lb2" 2>&1
if [[ ${XE_PMD:-af_xdp} == af_xdp ]]; then
    # On af_xdp the kernel keeps lb-wan, so the session outlives xvsd: the TAP withdrew.
    assert_contains "$(cat "$XE_TMP/lb2")" "Established" "the BGP session to director 2's BIRD stays up"
else
    # On af_packet the session ran through xvsd's exception TAP: BFD took it down.
    assert_not_contains "$(cat "$XE_TMP/lb2")" "Established" "the BGP session through the dead exception path is down"
    assert_contains "$(cat "$XE_TMP/lb2")" "BFD session down" "the router's BIRD: BFD ended the session"
fi
pass "kill -9: next hop withdrawn in $(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f", b - a }') s"
http_loop 20 "$XE_TMP/after-kill" "http://$VIP1/" 60
assert_eq 20 "$(grep -c '^rs[12]$' "$XE_TMP/after-kill")" "VIP 1 answers through director 1 alone"

# Director 2 back; then a clean stop of director 1 withdraws before it exits.
# A killed xvsd leaves its XDP program on the af_xdp interfaces: the new one detaches it.
start_director 2 "$XE_TMP/xvs2.conf"
if [[ ${XE_PMD:-af_xdp} == af_xdp ]]; then
    assert_contains "$(cat "$(director_log 2)")" "detached the program a previous xvsd left on lb-wan" \
        "the restarted director 2 took over the killed one's XDP hook"
fi
# The TAPs (af_packet) come back without addresses; af_xdp's interfaces kept theirs.
[[ $(ip -n "$(director_ns 2)" -4 addr show) == *" 10.10.1.22/"* ]] || director_kernel_up 2
wait_hops "$VIP1" "10.10.1.11 10.10.1.12" 20 "director 2 back after its restart"
stop_director 1 TERM
assert_eq 0 "$DIRECTOR_STATUS" "director 1's exit status after SIGTERM"
wait_hops "$VIP1" "10.10.1.12" 5 "director 1 withdrawn by its clean stop"
grep -q "routing: withdraw $VIP1: xvsd stopping" "$(director_log 1)" || fail "director 1 did not log its withdrawal at stop"
pass "clean stop withdraws (logged before exit)"
