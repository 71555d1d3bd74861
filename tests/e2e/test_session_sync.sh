#!/usr/bin/env bash
# Session sync and active/backup takeover (issue 15 items 3 and 4): two directors on one WAN
# segment (cluster_up 2, no router), director 1 `role master`, director 2 `role backup`, syncing
# over their kernel addresses on the RS LAN (unicast peers, exception path; XE_SYNC_MCAST=1:
# the multicast group 224.0.0.81 instead). A rate-limited
# 20 MB download and a loop of short requests run through director 1; its conn appears in
# director 2's table; kill -9 director 1: director 2 declares it failed, answers for the VIP
# and for director 1's local addresses (gratuitous ARP), the download completes
# sha256-identical and at most the requests in flight fail. Director 1 restarted as a backup
# asks director 2 for a full resync and lists the live conns; it stays silent for the VIP.
source "$(dirname "$0")/lib.sh"
e2e_init "${1:-build}"
need_tools sha256sum

cluster_up 2
start_rs_http 1
start_rs_http 2

sync_conf() { # sync_conf I ROLE
    local d=$1 role=$2 other=$((3 - $1))
    config_head_d "$d"
    vs_block TCP "$VIP" 80 "1:8080:1 2:8080:1" rr
    cat <<EOF
sync_defs {
    syncid 7
    source 10.10.2.2$d
$( ((${XE_SYNC_MCAST:-0})) || echo "    peer 10.10.2.2$other")
    role $role
    heartbeat 1
    peer_timeout 2
}
EOF
}
kernel_up() { # director_kernel_up, once per interface (af_xdp keeps them across restarts)
    ip -n "$(director_ns "$1")" -4 addr show | grep -q "10.10.2.2$1/" || director_kernel_up "$1"
}
mac_of() { ip -n "$(director_ns "$1")" link show lb-wan | awk '/link\/ether/ { print $2 }'; }
vip_mac() { ip -n "$NS_CL" neigh show "$VIP" | awk '{ for (i = 1; i < NF; i++) if ($i == "lladdr") print $(i + 1) }'; }

sync_conf 1 master >"$XE_TMP/d1.conf"
sync_conf 2 backup >"$XE_TMP/d2.conf"
start_director 1 "$XE_TMP/d1.conf"
kernel_up 1
start_director 2 "$XE_TMP/d2.conf"
kernel_up 2
wait_until 15 bash -c "XVS_SOCKET=$(director_sock 1) $BUILD/xvsctl sync | grep -q '10.10.2.22 alive'" ||
    fail "director 1 never heard director 2: $(xvsctl_d 1 sync)"
wait_until 15 bash -c "XVS_SOCKET=$(director_sock 2) $BUILD/xvsctl sync | grep -q '10.10.2.21 alive, role master, active'" ||
    fail "director 2 never heard director 1: $(xvsctl_d 2 sync)"
pass "directors hear each other"
xvsctl_d 2 sync >&2
assert_contains "$(xvsctl_d 2 sync)" "role backup, backup" "director 2 starts as a silent backup"

# The VIP resolves to director 1 only: the backup does not answer ARP for it.
assert_contains "$(http_get "http://$VIP/")" "rs" "a request through the master"
assert_eq "$(mac_of 1)" "$(vip_mac)" "the client's ARP entry for the VIP is director 1's"

want=$(sha256sum <"$XE_TMP/big.bin" | cut -d' ' -f1)
# ~10 s at 2 MB/s: long enough to kill the master in the middle.
bg_ns "$NS_CL" "$XE_TMP/dl.out" curl -s --max-time 90 --limit-rate 2M -H "Connection: close" \
    -o "$XE_TMP/dl" -w '%{http_code} %{size_download}\n' "http://$VIP/big.bin"
dl_pid=${XE_PIDS[-1]}
# Short requests every 50 ms across the kill (bounded: 200 requests, 60 s).
# shellcheck disable=SC2016
in_ns "$NS_CL" timeout 60 bash -c '
    for ((k = 0; k < 200; k++)); do
        body=$(curl -s --max-time 2 -H "Connection: close" "$1"); rc=$?
        if ((rc == 0)) && [[ -n $body ]]; then echo "$body"; else echo "ERR$rc"; fi
        sleep 0.05
    done' _ "http://$VIP/" >"$XE_TMP/short" &
loop_pid=$!

# The download's conn reaches the backup's table through the sync channel.
wait_until 10 bash -c "XVS_SOCKET=$(director_sock 2) $BUILD/xvsadm -L -n -c | grep -q 'ESTABLISHED.*$VIP:80'" ||
    fail "the master's conn never appeared on the backup: $(xvsadm_d 2 -L -n -c) $(xvsctl_d 2 sync)"
pass "a conn of the master is listed by the backup"
xvsadm_d 2 -L -n -c >&2
imported=$(counter_d 2 sync_imported)
assert_ge "${imported:-0}" 1 "sync_imported on director 2"
sleep 2
size_before=$(stat -c %s "$XE_TMP/dl" 2>/dev/null || echo 0)
log "killing director 1 at $size_before bytes downloaded"
assert_le "$size_before" $((18 * 1024 * 1024)) "the download is still running when director 1 dies"
stop_director 1 KILL
t_kill=$SECONDS

wait_until 10 bash -c "XVS_SOCKET=$(director_sock 2) $BUILD/xvsctl sync | grep -q 'role backup, active'" ||
    fail "director 2 did not take over: $(xvsctl_d 2 sync)"
log "director 2 took over after $((SECONDS - t_kill)) s"
state=$(xvsctl_d 2 sync)
echo "$state" >&2
assert_contains "$state" "10.10.2.21 failed" "director 1 declared failed"
assert_contains "$state" "claimed local addresses: 10.10.2.100 10.10.2.101" "director 1's local addresses claimed"
assert_ge "$(counter_d 2 arp_gratuitous_sent)" 1 "gratuitous ARPs sent by director 2"

wait "$dl_pid" 2>/dev/null
read -r code size <"$XE_TMP/dl.out"
got=$(sha256sum <"$XE_TMP/dl" | cut -d' ' -f1)
log "download: HTTP $code, $size bytes, finished $((SECONDS - t_kill)) s after the kill"
assert_eq "$want" "$got" "sha256 of the 20 MB download across the takeover"
assert_eq "$(mac_of 2)" "$(vip_mac)" "the client's ARP entry for the VIP is director 2's"
wait "$loop_pid"
fails=$(grep -c '^ERR' "$XE_TMP/short" || true)
log "short requests: $(sort "$XE_TMP/short" | uniq -c | tr '\n' ' ')"
assert_le "$fails" 3 "short requests failed across the takeover (only those in flight)"
assert_eq 200 "$(wc -l <"$XE_TMP/short")" "short requests made"
assert_contains "$(http_get "http://$VIP/")" "rs" "a new request through director 2"

# Director 1 back as a backup: it asks director 2 for every live conn and lists them. The
# witness is an idle conn held open across the rejoin (hold_conn: a download's conn once left
# ESTABLISHED on a loaded CI box before director 1 had started). The download spans the
# rejoin for the byte check.
held=10.10.1.2:40404
hold_conn "$held" 40
bg_ns "$NS_CL" "$XE_TMP/dl2.out" curl -s --max-time 90 --limit-rate 2M -H "Connection: close" \
    -o "$XE_TMP/dl2" -w '%{http_code} %{size_download}\n' "http://$VIP/big.bin"
dl2_pid=${XE_PIDS[-1]}
wait_until 10 conn_live_d 2 "$held" || fail "the held conn is not live on director 2: $(xvsadm_d 2 -L -n -c)"
sync_conf 1 backup >"$XE_TMP/d1b.conf"
# A killed xvsd leaves its XDP program on the ports (af_xdp): the new xvsd detaches it.
start_director 1 "$XE_TMP/d1b.conf"
kernel_up 1
wait_until 15 conn_live_d 1 "$held" ||
    fail "restarted director 1 did not resync (no $held):
$(sync_dump_d 1)
$(sync_dump_d 2)
== curl: $(cat "$XE_TMP/dl2.out" 2>&1) $(stat -c %s "$XE_TMP/dl2" 2>&1)"
# A conn update of director 2's can bring the held conn before its first heartbeat does: the
# heartbeat (every second) is what tells director 1 its peer's role and state, and what makes
# it ask for the full resync.
rejoined() {
    local s
    s=$(xvsctl_d 1 sync)
    [[ $s == *"10.10.2.22 alive, role backup, active"* ]] &&
        awk '$1 == "resyncs_requested" { ok = $2 >= 1 } END { exit !ok }' <<<"$s"
}
wait_until 10 rejoined || fail "director 1 did not hear director 2's heartbeat and ask for a resync: $(sync_dump_d 1)"
pass "restarted director 1 lists director 2's live conns (full resync)"
xvsadm_d 1 -L -n -c >&2
assert_ge "$(xvsctl_d 2 sync | awk '$1 == "resyncs_served" { print $2 }')" 1 "resyncs served by director 2"
state1=$(xvsctl_d 1 sync)
assert_contains "$state1" "role backup, backup" "director 1 rejoined as a silent backup"
assert_contains "$state1" "10.10.2.22 alive, role backup, active" "director 1 sees director 2 active"
wait "$dl2_pid" 2>/dev/null
got=$(sha256sum <"$XE_TMP/dl2" | cut -d' ' -f1)
assert_eq "$want" "$got" "sha256 of the download during the rejoin"
assert_eq "$(mac_of 2)" "$(vip_mac)" "the VIP stays on director 2"
