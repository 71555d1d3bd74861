#!/usr/bin/env bash
# A director's failure loses no connection (issue 15, all items together): a router namespace
# runs BIRD with a BGP session (and BFD) to each director's BIRD; both directors announce the
# VIP (lb_algo mh, the same Maglev table on both) so the router spreads flows by ECMP; the
# directors sync every conn to each other (`role both`, unicast over their kernel addresses on
# the RS LAN). Eight rate-limited 20 MB downloads from eight client addresses and 100 short
# requests from 50 addresses run; the director carrying most downloads is killed with -9:
#   - its next hop leaves the router's multipath route (liveness TAP / BFD);
#   - the survivor declares it failed and claims its FULLNAT local addresses (gratuitous ARP),
#     so the real servers' replies to them reach the survivor;
#   - every download completes sha256-identical through the survivor (its flows moved by the
#     router find their conns there, synced), and at most the requests in flight fail.
# The killed director is started again: it resyncs from the survivor (lists its live conns),
# takes its local addresses back, is announced again, and 50 requests from 50 client
# addresses (both directors by ECMP) plus a download that outlives the rejoin all succeed.
source "$(dirname "$0")/lib.sh"
e2e_init "${1:-build}"
need_tools bird birdc sha256sum

cluster_up 2 router
start_rs_http 1
start_rs_http 2

# The router: eBGP with BFD to both directors, one multipath route (lib.sh).
start_router_bird ""

write_conf() { # write_conf I
    local d=$1 other=$((3 - $1))
    {
        config_head_d "$d"
        vs_block TCP "$VIP" 80 "1:8080:1 2:8080:1" mh
        cat <<EOF
bgp_defs {
    bird_socket $XE_TMP/bird$d.ctl
    bird_config $XE_TMP/bird-xvs$d.conf
    router_id 10.10.1.2$d
    local_as 65001
    neighbor 10.10.1.254 remote_as 65000 hold_time 60 bfd
    source_address 10.10.1.2$d
    next_hop 10.10.1.1$d
}
sync_defs {
    syncid 9
    source 10.10.2.2$d
    peer 10.10.2.2$other
    role both
    heartbeat 1
    peer_timeout 2
}
EOF
    } >"$XE_TMP/xvs$d.conf"
}
kernel_up() { # the TAPs (af_packet) come back without addresses; af_xdp's veths keep them
    [[ $(ip -n "$(director_ns "$1")" -4 addr show) == *" 10.10.1.2$1/"* ]] || director_kernel_up "$1"
}
# hops : the router's next hops for the VIP, sorted, space-separated ("" without a route).
hops() { route_hops "$VIP"; }

for d in 1 2; do
    write_conf "$d"
    start_director "$d" "$XE_TMP/xvs$d.conf"
    kernel_up "$d"
    start_bird_d "$d"
done
wait_until 30 bash -c "[[ \$(ip -n $NS_RT route show $VIP) == *10.10.1.11*10.10.1.12* ]]" ||
    fail "the router has not both next hops for $VIP: $(ip -n "$NS_RT" route show "$VIP")"
assert_eq "10.10.1.11 10.10.1.12" "$(hops)" "the router's multipath route to the VIP"
for d in 1 2; do
    wait_until 15 bash -c "XVS_SOCKET=$(director_sock "$d") $BUILD/xvsctl sync | grep -q '10.10.2.2$((3 - d)) alive'" ||
        fail "director $d never heard its peer: $(xvsctl_d "$d" sync)"
done
pass "both directors announced and hear each other"

want=$(sha256sum <"$XE_TMP/big.bin" | cut -d' ' -f1)
# Eight downloads (~20 s each at 1 MB/s) from eight client addresses: the router's L4 hash
# puts them on both directors (all eight on one: 1 in 128).
for k in 0 1 2 3 4 5 6 7; do
    bg_ns "$NS_CL" "$XE_TMP/dl$k.out" curl -s --max-time 90 --limit-rate 1M --interface \
        "${CLUSTER_CLIENTS[k]}" -H "Connection: close" -o "$XE_TMP/dl$k" \
        -w '%{http_code} %{size_download}\n' "http://$VIP/big.bin"
    DL_PIDS+=("${XE_PIDS[-1]}")
done
# owned_downloads I : downloads whose conn uses director I's local addresses (it created them).
owned_downloads() {
    local lips='10\.10\.2\.10[01]:'
    (($1 == 2)) && lips='10\.10\.2\.10[23]:'
    xvsadm_d "$1" -L -n -c | grep 'ESTABLISHED' | grep -E "10\.10\.9\.(1[0-7]):" | grep -cE "$lips" || true
}
# Every download conn is on both directors: its owner's, synced to the other.
wait_until 10 bash -c "(( \$(XVS_SOCKET=$(director_sock 1) $BUILD/xvsadm -L -n -c | grep -c 'ESTABLISHED.*10\.10\.9\.1[0-7]:') >= 8 &&
    \$(XVS_SOCKET=$(director_sock 2) $BUILD/xvsadm -L -n -c | grep -c 'ESTABLISHED.*10\.10\.9\.1[0-7]:') >= 8 ))" ||
    fail "the download conns are not on both directors: $(xvsadm_d 1 -L -n -c) $(xvsadm_d 2 -L -n -c)
downloads ended (HTTP code, bytes): $(grep -H . "$XE_TMP"/dl?.out)
route: $(ip -n "$NS_RT" route show "$VIP")
$(tail -n 5 "$XE_TMP"/rs?/error.log 2>/dev/null)
$(xvsctl_d 1 stats -a 2>&1 | grep -iE "drop|sync" | head -40)"
own1=$(owned_downloads 1)
own2=$(owned_downloads 2)
log "downloads created by director 1: $own1, by director 2: $own2"
assert_eq 8 $((own1 + own2)) "every download has one owner"
victim=1
((own2 > own1)) && victim=2
survivor=$((3 - victim))
((own1 > 0 && own2 > 0)) || log "all downloads on director $victim (the router's hash)"

# 100 short requests from 50 client addresses across the kill (bounded: 60 s).
# shellcheck disable=SC2016
in_ns "$NS_CL" timeout 60 bash -c '
    url=$1; shift
    for ((k = 0; k < 100; k++)); do
        src=${@:$((k % 50 + 1)):1}
        body=$(curl -s --max-time 3 --interface "$src" -H "Connection: close" "$url"); rc=$?
        if ((rc == 0)) && [[ -n $body ]]; then echo "$body"; else echo "ERR$rc $src"; fi
        sleep 0.05
    done' _ "http://$VIP/" "${CLUSTER_CLIENTS[@]}" >"$XE_TMP/short" &
loop_pid=$!
XE_PIDS+=("$loop_pid")

sleep 2
largest=0
for k in 0 1 2 3 4 5 6 7; do
    s=$(stat -c %s "$XE_TMP/dl$k" 2>/dev/null || echo 0)
    ((s > largest)) && largest=$s
done
assert_le "$largest" $((16 * 1024 * 1024)) "the downloads are still running when director $victim dies"
log "kill -9 director $victim"
stop_director "$victim" KILL
t_kill=$SECONDS

wait_until 10 bash -c "[[ \$(ip -n $NS_RT route show $VIP) != *10.10.1.1$victim* ]]" ||
    fail "director $victim's next hop is still on the router: $(ip -n "$NS_RT" route show "$VIP")"
log "director $victim's next hop gone after $((SECONDS - t_kill)) s"
assert_eq "10.10.1.1$survivor" "$(hops)" "the router's route to the VIP: the survivor only"
vlips="10.10.2.100 10.10.2.101"
((victim == 2)) && vlips="10.10.2.102 10.10.2.103"
wait_until 10 bash -c "XVS_SOCKET=$(director_sock "$survivor") $BUILD/xvsctl sync | grep -q 'claimed local addresses: $vlips'" ||
    fail "director $survivor did not claim director $victim's local addresses: $(xvsctl_d "$survivor" sync)"
log "director $survivor claimed $vlips after $((SECONDS - t_kill)) s"
assert_ge "$(counter_d "$survivor" arp_gratuitous_sent)" 1 "gratuitous ARPs sent by director $survivor"

ok=0
for k in 0 1 2 3 4 5 6 7; do
    wait "${DL_PIDS[k]}" 2>/dev/null
    read -r code size <"$XE_TMP/dl$k.out"
    got=$(sha256sum <"$XE_TMP/dl$k" | cut -d' ' -f1)
    log "download $k (${CLUSTER_CLIENTS[k]}): HTTP $code, $size bytes"
    [[ $got == "$want" ]] && ok=$((ok + 1))
done
log "downloads finished $((SECONDS - t_kill)) s after the kill"
assert_eq 8 "$ok" "downloads sha256-identical across the failure (owner's: $own1/$own2)"
wait "$loop_pid"
fails=$(grep -c '^ERR' "$XE_TMP/short" || true)
log "short requests: $(cut -d' ' -f1 "$XE_TMP/short" | sort | uniq -c | tr '\n' ' ')"
assert_eq 100 "$(wc -l <"$XE_TMP/short")" "short requests made"
assert_le "$fails" 3 "short requests failed across the failure (only those in flight)"
assert_ge "$(counter_d "$survivor" sync_imported)" 1 "conns imported by director $survivor"

# The killed director comes back: resync, its local addresses back, announced again. The
# resync's witness is an idle conn held open across the rejoin (hold_conn).
held=${CLUSTER_CLIENTS[8]}:40404
hold_conn "$held" 45
bg_ns "$NS_CL" "$XE_TMP/dl8.out" curl -s --max-time 90 --limit-rate 1M --interface \
    "${CLUSTER_CLIENTS[8]}" -H "Connection: close" -o "$XE_TMP/dl8" \
    -w '%{http_code} %{size_download}\n' "http://$VIP/big.bin"
dl8_pid=${XE_PIDS[-1]}
wait_until 10 bash -c "XVS_SOCKET=$(director_sock "$survivor") $BUILD/xvsadm -L -n -c | grep -q 'ESTABLISHED.*${CLUSTER_CLIENTS[8]//./\\.}:'" ||
    fail "no conn for the ninth download on director $survivor"
wait_until 10 conn_live_d "$survivor" "$held" || fail "the held conn is not live on director $survivor"
start_director "$victim" "$XE_TMP/xvs$victim.conf"
if [[ ${XE_PMD:-af_xdp} == af_xdp ]]; then
    assert_contains "$(cat "$(director_log "$victim")")" "detached the program a previous xvsd left on lb-wan" \
        "the restarted director took over the killed one's XDP hook"
fi
kernel_up "$victim"
wait_until 15 conn_live_d "$victim" "$held" ||
    fail "restarted director $victim did not resync (no $held):
$(sync_dump_d "$victim")
$(sync_dump_d "$survivor")"
pass "restarted director $victim lists the survivor's live conns (full resync)"
wait_until 15 bash -c "! XVS_SOCKET=$(director_sock "$survivor") $BUILD/xvsctl sync | grep -q 'claimed local addresses: $vlips'" ||
    fail "director $survivor kept director $victim's local addresses: $(xvsctl_d "$survivor" sync)"
pass "director $survivor gave director $victim's local addresses back"
bird_state() { # what both BIRDs say, for a failure message
    local ns name
    for ns in "$NS_RT" "$(director_ns "$victim")"; do
        name=bird-rt
        [[ $ns == "$NS_RT" ]] || name=bird$victim
        echo "== $name"
        in_ns "$ns" birdc -s "$XE_TMP/$name.ctl" show protocols 2>&1
        in_ns "$ns" birdc -s "$XE_TMP/$name.ctl" show route 2>&1
        in_ns "$ns" birdc -s "$XE_TMP/$name.ctl" show interfaces 2>&1
    done
    xvsctl_d "$victim" announce show
}
wait_until 60 bash -c "[[ \$(ip -n $NS_RT route show $VIP) == *10.10.1.11*10.10.1.12* ]]" ||
    fail "director $victim is not announced again: $(ip -n "$NS_RT" route show "$VIP"); $(bird_state)"
assert_eq "10.10.1.11 10.10.1.12" "$(hops)" "both next hops again after the rejoin"
# 50 requests, one per client address: the router sends some to each director again.
before1=$(xvsadm_d 1 -L -n --stats | awk -v v="$VIP:80" '$2 == v { print $3 }')
before2=$(xvsadm_d 2 -L -n --stats | awk -v v="$VIP:80" '$2 == v { print $3 }')
ok=0
for c in "${CLUSTER_CLIENTS[@]}"; do
    [[ -n $(in_ns "$NS_CL" curl -s --max-time 3 --interface "$c" -H "Connection: close" "http://$VIP/") ]] &&
        ok=$((ok + 1))
done
assert_eq 50 "$ok" "requests from 50 client addresses after the rejoin"
after1=$(xvsadm_d 1 -L -n --stats | awk -v v="$VIP:80" '$2 == v { print $3 }')
after2=$(xvsadm_d 2 -L -n --stats | awk -v v="$VIP:80" '$2 == v { print $3 }')
log "new conns after the rejoin: director 1 $((after1 - before1)), director 2 $((after2 - before2))"
assert_ge $((after1 - before1)) 1 "director 1 takes new conns"
assert_ge $((after2 - before2)) 1 "director 2 takes new conns"
wait "$dl8_pid" 2>/dev/null
got=$(sha256sum <"$XE_TMP/dl8" | cut -d' ' -f1)
assert_eq "$want" "$got" "sha256 of the download that outlived the rejoin"
