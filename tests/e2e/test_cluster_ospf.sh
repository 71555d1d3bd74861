#!/usr/bin/env bash
# The OSPF variant of test_cluster_bgp (issue 15 item 1): each director's BIRD (in its
# namespace, on the director's kernel address through xvs's exception path) joins area 0 with
# the router's BIRD and exports the VIPs xvsd announces as AS-external type 2 routes (metric
# 20); the router's OSPF with ecmp installs a multipath route over both directors. Checked:
#   - both next hops (the directors' kernel addresses 10.10.1.21 and 10.10.1.22, the ASBRs) in
#     the router's route for each VIP; xvsctl announce show names OSPF; 40 requests answered
#     from 20 client addresses and both directors see conns;
#   - the real servers of VIP 2 stopped -> VIP 2 gone from the router (LSA flushed), VIP 1
#     stays; started again -> back;
#   - kill -9 of director 2 -> its next hop leaves the route within 8 s (af_xdp: the liveness
#     TAP goes and BIRD flushes the LSA; af_packet: the adjacency ran through xvsd's exception
#     TAP and dies with it, the router's dead interval is 4 s) and VIP 1 still answers.
source "$(dirname "$0")/lib.sh"
e2e_init "${1:-build}"
need_tools curl bird birdc

VIP1=10.10.1.100
VIP2=10.10.1.101
cluster_up 4 router
for i in 1 2 3 4; do start_rs_http "$i"; done

write_conf_d() {
    local d=$1 wan_if=lb-wan
    [[ ${XE_PMD:-af_xdp} == af_packet ]] && wan_if=xe-wan
    {
        config_head_d "$d"
        cat <<EOF
ospf_defs {
    bird_socket $XE_TMP/bird$d.ctl
    bird_config $XE_TMP/bird-xvs$d.conf
    router_id 10.10.1.2$d
    area 0
    interface $wan_if hello 1 dead 4
    metric 20
}
EOF
        vs_block_checked "$VIP1" 1 2
        vs_block_checked "$VIP2" 3 4
    } >"$XE_TMP/xvs$d.conf"
}

# The router: OSPF area 0 on its WAN link, equal-cost paths installed as one multipath route.
start_router_bird 'protocol ospf v2 rt_ospf {
    ecmp yes;
    merge external yes;  # the same VIP from both ASBRs: one multipath route, not two LSAs routes
    ipv4 { import all; export none; };
    area 0 {
        interface "rt-wan" { hello 1; dead 4; };
    };
}'

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
    [[ $(hops "$1") == "$2" ]] || fail "$4: router's route to $1 is '$(hops "$1")', expected '$2' ($(ip -n "$NS_RT" route show "$1")); router OSPF: $(birdc -s "$XE_TMP/bird-rt.ctl" show ospf neighbors 2>&1 | tr "\n\t" "| "); $(birdc -s "$XE_TMP/bird-rt.ctl" show route all 2>&1 | tr "\n\t" "| ")"
}

wait_hops "$VIP1" "10.10.1.21 10.10.1.22" 60 "both directors announce VIP 1 into OSPF"
wait_hops "$VIP2" "10.10.1.21 10.10.1.22" 10 "both directors announce VIP 2 into OSPF"
pass "multipath routes on the router: $(ip -n "$NS_RT" route show "$VIP1" | tr '\n' ' ')"
birdc -s "$XE_TMP/bird-rt.ctl" show route "$VIP1/32" all >"$XE_TMP/rt-route" 2>&1
assert_contains "$(cat "$XE_TMP/rt-route")" "OSPF.metric2: 20" "the external metric on the router"
show=$(xvsctl_d 2 announce show)
assert_contains "$show" "; ospf" "xvsctl announce show names OSPF"
assert_eq 2 "$(grep -c 'announced  yes' <<<"$show")" "both VIPs announced and in BIRD (director 2)"

# conns DIRECTOR : the conns VIP 1's service has had on that director.
conns() { xvsadm_d "$1" -L -n --stats -t "$VIP1:80" | awk -v v="$VIP1:80" '$1 == "TCP" && $2 == v { print $3 }'; }
# shellcheck disable=SC2016
in_ns "$NS_CL" bash -c '
    for a in "$@"; do for k in 1 2; do
        curl -s --max-time 3 --interface "$a" -H "Connection: close" http://'"$VIP1"'/ || echo ERR
    done; done' _ "${CLUSTER_CLIENTS[@]:0:20}" >"$XE_TMP/spread"
assert_eq 40 "$(grep -c '^rs[12]$' "$XE_TMP/spread")" "requests from 20 client addresses answered"
c1=$(conns 1)
c2=$(conns 2)
assert_ge "${c1:-0}" 1 "director 1's conns of VIP 1"
assert_ge "${c2:-0}" 1 "director 2's conns of VIP 1"
pass "ECMP spread over OSPF: director 1 $c1 conns, director 2 $c2 conns"

# Quorum: VIP 2's real servers stop -> its external LSAs are flushed; VIP 1 untouched.
for i in 3 4; do kill "$(cat "$XE_TMP/rs$i/nginx.pid")"; done
wait_hops "$VIP2" "" 15 "VIP 2 withdrawn when its real servers stopped"
assert_eq "10.10.1.21 10.10.1.22" "$(hops "$VIP1")" "VIP 1 stays announced by both"
for i in 3 4; do
    bg_ns "$(ns_rs "$i")" "$XE_TMP/rs$i/nginx2.out" nginx -c "$XE_TMP/rs$i/nginx.conf"
done
wait_hops "$VIP2" "10.10.1.21 10.10.1.22" 15 "VIP 2 back when its real servers are"
pass "VIP 2 withdrawn on quorum loss and announced again"

t0=$(date +%s.%N)
stop_director 2 KILL
wait_hops "$VIP1" "10.10.1.21" 8 "director 2's next hop gone after kill -9"
t1=$(date +%s.%N)
birdc -s "$XE_TMP/bird2.ctl" show route protocol xvs_vips4 >"$XE_TMP/lb2-static" 2>&1
assert_not_contains "$(cat "$XE_TMP/lb2-static")" "$VIP1" "director 2's BIRD dropped its static VIP routes (liveness TAP gone)"
pass "kill -9: next hop withdrawn in $(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f", b - a }') s"
http_loop 20 "$XE_TMP/after-kill" "http://$VIP1/" 60
assert_eq 20 "$(grep -c '^rs[12]$' "$XE_TMP/after-kill")" "VIP 1 answers through director 1 alone"
