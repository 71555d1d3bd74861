#!/usr/bin/env bash
# Real-server client-address readers without kernel modules (issue 16): `xvs-rs toa` and
# `xvs-rs uoa` on rs1, attached to a cgroup2 child cgroup that holds only rs1's servers (cgroup
# hooks are per cgroup, not per network namespace). TCP: nginx behind a FULLNAT VIP with
# `toa on` logs the LIP before `xvs-rs toa` and, after it, 10.10.1.2 and exactly the port curl
# used for each of 20 requests ($remote_addr/$remote_port from accept()); a VIP without TOA to
# the same nginx still logs a LIP; after `xvs-rs toa off` the TOA VIP logs a LIP again. Orders
# xvs does not send, from a scapy probe on the RS LAN to a python server in the cgroup: TOA on
# the handshake ACK (accept() shows it), TOA only on the first data after a bare ACK
# (getpeername() after the data shows it: toa_found_later), none in 11 segments (the real peer;
# toa_not_found once the program gives up after 8 slow-path segments), an IPv6 client's TOA
# on an IPv4 socket (the real peer, toa_peer_family_mismatch). UDP: a
# python recvfrom/sendto server behind a `uoa ipo` VIP and one behind a `uoa opp` VIP see
# 10.10.1.2 and the flow's client port for every datagram (7 per flow, 3 with UOA), and every
# datagram is answered through the director (opp ones too: the kernel alone drops protocol
# 248). `xvs-rs toa|uoa status` counters; `off` detaches both.
source "$(dirname "$0")/lib.sh"
e2e_init "${1:-build}"
need_tools mount umount nft ss timeout
[[ -x $BUILD/xvs-rs ]] || fail "$BUILD/xvs-rs not built"

RS_PORT=8080
CURL_N=20
COUNT=7
problems=()
problem() { problems+=("$*"); echo "problem: $*" >&2; }

# Our own cgroup2 mount (the host may have none, or only v1) and a child cgroup for rs1's
# servers; /tmp stays visible under `ip netns exec`, which remounts only /sys.
CG_MNT=$XE_TMP/cgroup2
CG=$CG_MNT/$XE-rs1
mkdir -p "$CG_MNT"
mount -t cgroup2 none "$CG_MNT" || fail "cannot mount cgroup2 at $CG_MNT"
mkdir "$CG" || fail "cannot create cgroup $CG"
rs_readers_cleanup() {
    local p
    "$BUILD/xvs-rs" toa off --cgroup "$CG" >/dev/null 2>&1
    ip netns exec "$(ns_rs 1)" "$BUILD/xvs-rs" uoa off --cgroup "$CG" >/dev/null 2>&1
    for p in $(cat "$CG/cgroup.procs" 2>/dev/null); do kill -TERM "$p" 2>/dev/null; done
    wait_until 3 test ! -s "$CG/cgroup.procs"
    for p in $(cat "$CG/cgroup.procs" 2>/dev/null); do kill -KILL "$p" 2>/dev/null; done
    for _ in 1 2 3 4 5 6 7 8 9 10; do
        rmdir "$CG" 2>/dev/null && break
        sleep 0.2
    done
    mountpoint -q "$CG_MNT" && umount "$CG_MNT"
    return 0
}
trap 'rc=$?; rs_readers_cleanup; (exit $rc); cleanup' EXIT

# rs_in_cgroup LOG CMD... : CMD in rs1's namespace and in the cgroup, from its first socket on.
rs_in_cgroup() {
    local out=$1
    shift
    bg_ns "$(ns_rs 1)" "$out" sh -c 'echo $$ >"$0/cgroup.procs" && exec "$@"' "$CG" "$@"
}
rs_bpf() { in_ns "$(ns_rs 1)" "$BUILD/xvs-rs" "$@" --cgroup "$CG"; }

topo_up 1
conf=$XE_TMP/xvs.conf
{
    config_head
    vs_block TCP "$VIP" 80 "1:$RS_PORT:1" | sed '$i\    toa on'
    vs_block TCP "$VIP" 81 "1:$RS_PORT:1"
    vs_block TCP "$VIP" 82 "1:8081:1" | sed '$i\    toa on'
    vs_block UDP "$VIP" 53 "1:5353:1" rr | sed '$i\    uoa ipo'
    vs_block UDP "$VIP" 54 "1:5354:1" rr | sed '$i\    uoa opp'
    vs_block UDP "$VIP" 55 "1:5355:1" rr | sed '$i\    uoa opp'
} >"$conf"
start_xvsd "$conf"

# nginx on rs1, in the cgroup, logging the peer address and port accept() returned.
dir=$XE_TMP/rs1
mkdir -p "$dir/tmp"
cat >"$dir/nginx.conf" <<EOF
daemon off;
master_process off;
worker_processes 1;
pid $dir/nginx.pid;
error_log $dir/error.log warn;
events { worker_connections 1024; }
http {
    log_format peer '\$remote_addr \$remote_port';
    access_log $dir/access.log peer;
    client_body_temp_path $dir/tmp/body;
    proxy_temp_path $dir/tmp/proxy;
    fastcgi_temp_path $dir/tmp/fastcgi;
    uwsgi_temp_path $dir/tmp/uwsgi;
    scgi_temp_path $dir/tmp/scgi;
    server {
        listen $(rs_ip 1):$RS_PORT;
        location = / { default_type text/plain; return 200 "rs1\n"; }
    }
    server {
        # dual-stack: an IPv4 peer reads as ::ffff:a.b.c.d (getpeername6)
        listen [::]:8081 ipv6only=off;
        location = / { default_type text/plain; return 200 "rs1\n"; }
    }
}
EOF
rs_in_cgroup "$dir/nginx.out" nginx -c "$dir/nginx.conf"
wait_until 10 in_ns "$(ns_rs 1)" curl -s --max-time 1 -o /dev/null "http://$(rs_ip 1):$RS_PORT/" ||
    fail "nginx on rs1 did not start: $(cat "$dir/nginx.out" "$dir/error.log" 2>/dev/null)"
grep -qx "$BG_PID" "$CG/cgroup.procs" || fail "nginx (pid $BG_PID) is not in $CG"

# get PORT : one request to VIP:PORT; prints curl's local port, empty on failure.
get() {
    local r
    r=$(in_ns "$NS_CL" curl -s --max-time 2 -H "Connection: close" -w ' %{local_port}' \
        "http://$VIP:$1/") || true
    [[ $r =~ ^rs1$'\n'\ ([0-9]+)$ ]] && echo "${BASH_REMATCH[1]}"
}
# last_peer : the address and port of the last request nginx logged.
last_peer() { tail -n 1 "$dir/access.log"; }
is_lip() { [[ $1 =~ ^10\.10\.2\.10[0-3]\  ]]; }

# 1. Before xvs-rs toa: the TOA VIP shows nginx a LIP (the kernel ignores kind 254).
: >"$dir/access.log"
p=$(get 80)
[[ -n $p ]] || fail "request to the TOA VIP before xvs-rs toa failed"
is_lip "$(last_peer)" || problem "before xvs-rs toa nginx logged '$(last_peer)', expected a LIP"

# 2. xvs-rs toa on the cgroup, from rs1's namespace.
out=$(rs_bpf toa 2>&1) || fail "xvs-rs toa: $out"
echo "$out" >&2
for h in cgroup/sockops cgroup/getpeername4 cgroup/getpeername6; do
    assert_contains "$out" "$h" "xvs-rs toa attaches $h"
done

: >"$dir/access.log"
ports=()
for ((k = 0; k < CURL_N; k++)); do
    p=$(get 80)
    [[ -n $p ]] && ports+=("$p")
done
assert_eq "$CURL_N" "${#ports[@]}" "requests answered through the TOA VIP"
mapfile -t logged <"$dir/access.log"
assert_eq "$CURL_N" "${#logged[@]}" "nginx access-log lines"
for ((k = 0; k < ${#ports[@]}; k++)); do
    [[ ${logged[k]:-} == "$CLIENT_IP ${ports[k]}" ]] ||
        problem "request $k: nginx logged '${logged[k]:-}', expected '$CLIENT_IP ${ports[k]}'"
done

# 2b. A dual-stack listener behind another TOA VIP: the client as ::ffff:10.10.1.2.
: >"$dir/access.log"
ports=()
for k in 1 2 3; do
    p=$(get 82)
    [[ -n $p ]] && ports+=("$p")
done
assert_eq 3 "${#ports[@]}" "requests answered through the TOA VIP to the dual-stack listener"
mapfile -t logged <"$dir/access.log"
for ((k = 0; k < ${#ports[@]}; k++)); do
    [[ ${logged[k]:-} == "::ffff:$CLIENT_IP ${ports[k]}" ]] ||
        problem "dual-stack request $k: nginx logged '${logged[k]:-}', expected '::ffff:$CLIENT_IP ${ports[k]}'"
done

# 3. The same nginx through a VIP without TOA: the LIP, as the kernel sees it.
: >"$dir/access.log"
for k in 1 2 3; do
    [[ -n $(get 81) ]] || problem "request $k to the plain VIP:81 failed"
done
while read -r line; do
    is_lip "$line" || problem "plain VIP:81: nginx logged '$line', expected a LIP"
done <"$dir/access.log"

st=$(rs_bpf toa status) || fail "xvs-rs toa status: $st"
echo "$st" >&2
tcounter() { awk -v k="toa_$1" '$1 == k { print $2 }' <<<"$st"; }
[[ $(tcounter found_established) -ge $CURL_N ]] ||
    problem "toa_found_established = $(tcounter found_established), expected >= $CURL_N"
[[ $(tcounter peer_rewritten) -ge $CURL_N ]] ||
    problem "toa_peer_rewritten = $(tcounter peer_rewritten), expected >= $CURL_N"

# 3b. Orders xvs does not produce, straight from a probe host on the RS LAN (scapy): TOA on the
# handshake's ACK (accept() shows it), TOA only on the first data after a bare ACK
# (getpeername() once data arrived shows it; accept() may have run before), no TOA in 11
# slow-path segments (the real peer; the program gives up after 8: toa_not_found), and an IPv6
# client's 20-byte TOA, which an IPv4 socket cannot show (the real peer;
# toa_peer_family_mismatch) and a dual-stack one shows as is (FNAT64).
NS_PR=$XE-pr
PR_IP=10.10.2.77
TOA_ADDR=192.0.2.55
add_ns "$NS_PR"
ip link add pr0 netns "$NS_PR" type veth peer name sw-pr netns "$NS_SW" || fail "veth probe"
ip -n "$NS_SW" link set sw-pr master br0 up
no_offloads "$NS_SW" sw-pr
ip -n "$NS_PR" addr add "$PR_IP/24" dev pr0
ip -n "$NS_PR" link set pr0 up
no_offloads "$NS_PR" pr0
in_ns "$NS_PR" nft -f - <<EOF || fail "nft rule in the probe namespace"
table inet xe_rsr {
    chain out {
        type filter hook output priority 0; policy accept;
        tcp sport 41000-41099 tcp flags & rst == rst drop
    }
}
EOF
rs_in_cgroup "$XE_TMP/probe.out" "$XE_PY" "$XE_LIB_DIR/peer_probe_server.py" "$(rs_ip 1)" 8090 "$XE_TMP/probe.log"
rs_in_cgroup "$XE_TMP/probe6.out" "$XE_PY" "$XE_LIB_DIR/peer_probe_server.py" :: 8091 "$XE_TMP/probe6.log"
tcp_bound() { in_ns "$(ns_rs 1)" ss -Htln "sport = :$1" | grep -q .; }
wait_until 10 tcp_bound 8090 && wait_until 10 tcp_bound 8091 ||
    fail "probe servers on rs1 did not start: $(cat "$XE_TMP"/probe*.out)"
not_found_before=$(rs_bpf toa status | awk '$1 == "toa_not_found" { print $2 }')
rs_mac=$(ip -n "$(ns_rs 1)" -br link show rs0 | awk '{ print $3 }')
scripted=$(in_ns "$NS_PR" timeout 40 "$XE_PY" "$XE_LIB_DIR/toa_late_client.py" pr0 "$rs_mac" "$(rs_ip 1)" 8090 \
    41000 "$TOA_ADDR" 8091 2>"$XE_TMP/toa_late.err") ||
    fail "scripted connections failed: $scripted $(tail -n 20 "$XE_TMP/toa_late.err")"
echo "$scripted" >&2
assert_eq 5 "$(grep -c 'synack=1' <<<"$scripted")" "scripted connections answered with a SYN-ACK"
probe_lines() { (($(wc -l <"$XE_TMP/probe.log") >= 4 && $(wc -l <"$XE_TMP/probe6.log") >= 1)); }
wait_until 5 probe_lines
cat "$XE_TMP/probe.log" "$XE_TMP/probe6.log" >&2
grep -qx "accept $TOA_ADDR:41100 peer $TOA_ADDR:41100" "$XE_TMP/probe.log" ||
    problem "TOA on the handshake ACK: expected 'accept $TOA_ADDR:41100 peer $TOA_ADDR:41100' in the probe log"
grep -Eqx "accept ($PR_IP:41001|$TOA_ADDR:41101) peer $TOA_ADDR:41101" "$XE_TMP/probe.log" ||
    problem "TOA on the first data only: expected getpeername() $TOA_ADDR:41101 once data arrived"
grep -qx "accept $PR_IP:41002 peer $PR_IP:41002" "$XE_TMP/probe.log" ||
    problem "no TOA: expected the real peer $PR_IP:41002 for accept() and getpeername()"
grep -qx "accept $PR_IP:41003 peer $PR_IP:41003" "$XE_TMP/probe.log" ||
    problem "IPv6 client's TOA on an IPv4 socket: expected the real peer $PR_IP:41003"
grep -qx "accept 2001:db8::55:41104 peer 2001:db8::55:41104" "$XE_TMP/probe6.log" ||
    problem "IPv6 client's TOA on a dual-stack socket: expected 2001:db8::55:41104 (getpeername6)"
st=$(rs_bpf toa status) || fail "xvs-rs toa status: $st"
echo "$st" >&2
[[ $(tcounter found_later) -ge 1 ]] || problem "toa_found_later = $(tcounter found_later), expected >= 1"
[[ $(tcounter peer_family_mismatch) -ge 1 ]] ||
    problem "toa_peer_family_mismatch = $(tcounter peer_family_mismatch), expected >= 1"
[[ $(tcounter not_found) -ge $((not_found_before + 1)) ]] ||
    problem "toa_not_found = $(tcounter not_found), expected >= $((not_found_before + 1))"

# 4. UDP: recvfrom/sendto servers in the cgroup behind `uoa ipo` (5353) and `uoa opp` (5354).
rs_in_cgroup "$XE_TMP/udp53.out" "$XE_PY" "$XE_LIB_DIR/udp_peer_log.py" "$(rs_ip 1)" 5353 "rs1 " "$XE_TMP/peers53"
rs_in_cgroup "$XE_TMP/udp54.out" "$XE_PY" "$XE_LIB_DIR/udp_peer_log.py" "$(rs_ip 1)" 5354 "rs1 " "$XE_TMP/peers54"
rs_in_cgroup "$XE_TMP/udp55.out" "$XE_PY" "$XE_LIB_DIR/udp_peer_log.py" :: 5355 "rs1 " "$XE_TMP/peers55"
udp_bound() { in_ns "$(ns_rs 1)" ss -Huln "sport = :$1" | grep -q .; }
wait_until 10 udp_bound 5353 && wait_until 10 udp_bound 5354 && wait_until 10 udp_bound 5355 ||
    fail "UDP servers on rs1 did not start: $(cat "$XE_TMP"/udp5?.out)"
out=$(rs_bpf uoa --dev rs0 2>&1) || fail "xvs-rs uoa: $out"
echo "$out" >&2
for h in cgroup/recvmsg4 cgroup/sendmsg4 "tc ingress rs0"; do
    assert_contains "$out" "$h" "xvs-rs uoa attaches $h"
done
# Warm-up on other client ports (xvsd resolves rs1 first); then one flow per VIP.
in_ns "$NS_CL" timeout 10 "$XE_PY" "$XE_LIB_DIR/uoa_client.py" "$VIP" 1 W:42000:53:0 >/dev/null
: >"$XE_TMP/peers53"
: >"$XE_TMP/peers54"
: >"$XE_TMP/peers55"
res=$(in_ns "$NS_CL" timeout 20 "$XE_PY" "$XE_LIB_DIR/uoa_client.py" "$VIP" "$COUNT" I:42001:53:0 O:42101:54:0 D:42201:55:0) ||
    fail "uoa client failed: $res"
echo "$res" >&2
all=$(seq -s, 1 "$COUNT")
for f in I O D; do
    got=$(awk -v f="$f" '$1 == "flow" && $2 == f { print $4 }' <<<"$res")
    [[ $got == "$all" ]] || problem "UDP flow $f: answered $got, expected $all"
done
for spec in 53:42001: 54:42101: 55:42201:::ffff:; do
    IFS=: read -r vport cport _ <<<"$spec"
    prefix=${spec#*:*:} # "" for the IPv4 sockets, "::ffff:" for the dual-stack one
    n=$(wc -l <"$XE_TMP/peers$vport")
    assert_eq "$COUNT" "$n" "datagrams the VIP:$vport server received"
    while read -r line; do
        [[ $line == "$prefix$CLIENT_IP:$cport" ]] ||
            problem "VIP:$vport server: recvfrom() peer '$line', expected $prefix$CLIENT_IP:$cport"
    done <"$XE_TMP/peers$vport"
done

st=$(rs_bpf uoa status) || fail "xvs-rs uoa status: $st"
echo "$st" >&2
ucounter() { awk -v k="uoa_$1" '$1 == k { print $2 }' <<<"$st"; }
[[ $(ucounter ipo_seen) -ge 3 ]] || problem "uoa_ipo_seen = $(ucounter ipo_seen), expected >= 3"
[[ $(ucounter opp_stripped) -ge 6 ]] || problem "uoa_opp_stripped = $(ucounter opp_stripped), expected >= 6"
[[ $(ucounter recv_rewritten) -ge $((3 * COUNT)) ]] ||
    problem "uoa_recv_rewritten = $(ucounter recv_rewritten), expected >= $((3 * COUNT))"
[[ $(ucounter send_rewritten) -ge $((3 * COUNT)) ]] ||
    problem "uoa_send_rewritten = $(ucounter send_rewritten), expected >= $((3 * COUNT))"

# 5. off: both detached; the TOA VIP shows the LIP again.
out=$(rs_bpf toa off 2>&1) || problem "xvs-rs toa off: $out"
out=$(rs_bpf uoa off 2>&1) || problem "xvs-rs uoa off: $out"
rs_bpf toa status >/dev/null 2>&1 && problem "xvs-rs toa status still finds programs after off"
rs_bpf uoa status >/dev/null 2>&1 && problem "xvs-rs uoa status still finds programs after off"
: >"$dir/access.log"
[[ -n $(get 80) ]] || problem "request to the TOA VIP after off failed"
is_lip "$(last_peer)" || problem "after xvs-rs toa off nginx logged '$(last_peer)', expected a LIP"

if ((${#problems[@]})); then
    fail "rs readers: ${#problems[@]} problem(s):$(printf '\n  %s' "${problems[@]}")"
fi
pass "xvs-rs toa: nginx logs the client's address and port for $CURL_N requests; xvs-rs uoa: ipo and opp servers see the client and answer through the director; off detaches"
