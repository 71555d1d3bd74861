#!/usr/bin/env bash
# Config reload without dropping connections: a long-lived TCP connection through VIP:9000
# (line echo on the RS) keeps working while the config changes twice, once applied by SIGHUP
# (rs3 added, rs2's weight changed) and once by `xvsadm --reload` (rs1's weight changed).
# The new values show in `xvsadm -L -n`, rs3 answers, and `xvsadm -L -n -c` shows the
# long connection. Then, with `expire_nodest_conn on`, a reload removing the real server of a
# second long connection expires that connection at once.
source "$(dirname "$0")/lib.sh"
e2e_init "${1:-build}"

topo_up 3
for i in 1 2 3; do
    start_rs_http "$i"
    start_rs_echo "$i" 7000
done
conf=$XE_TMP/xvs.conf
write_conf() { # write_conf "HTTP_RS..."
    { config_head; vs_block TCP "$VIP" 80 "$1"; vs_block TCP "$VIP" 9000 "1:7000:1 2:7000:1" rr; } >"$conf"
}
write_conf "1:8080:1 2:8080:2"
start_xvsd "$conf"
# wait for the RS echo servers (they start in the background)
for i in 1 2 3; do
    wait_until 5 in_ns "$(ns_rs "$i")" bash -c "exec 3<>/dev/tcp/$(rs_ip "$i")/7000" ||
        fail "echo server on rs$i not listening"
done

long=$XE_TMP/long.out
in_ns "$NS_CL" timeout 40 "$XE_PY" "$XE_LIB_DIR/tcp_longconn.py" "$VIP" 9000 14 >"$long" 2>&1 &
long_pid=$!
XE_PIDS+=("$long_pid")
wait_until 5 grep -q '^ok 1$' "$long" || fail "long connection not echoing: $(cat "$long")"
client=$(awk '$1 == "connected" { print $3 }' "$long")
log "long connection from $client"

# 1) SIGHUP: add rs3, rs2 weight 2 -> 3
write_conf "1:8080:1 2:8080:3 3:8080:1"
kill -HUP "$XVSD_PID"
wait_until 5 bash -c "XVS_SOCKET=$XE_SOCK $BUILD/xvsadm -L -n | grep -q '10.10.2.4:8080'" ||
    fail "rs3 not listed 5 s after SIGHUP: $(xvsadm_ns -L -n)"
list=$(xvsadm_ns -L -n)
echo "$list" >&2
assert_contains "$list" "10.10.2.4:8080" "rs3 listed after SIGHUP"
assert_eq 3 "$(awk '$1 == "->" && $2 == "10.10.2.3:8080" { print $4 }' <<<"$list")" "rs2 weight after SIGHUP"
kill -0 "$XVSD_PID" 2>/dev/null || fail "xvsd died on SIGHUP"

# 2) xvsadm --reload: rs1 weight 1 -> 2
write_conf "1:8080:2 2:8080:3 3:8080:1"
xvsadm_ns --reload || fail "xvsadm --reload failed"
list=$(xvsadm_ns -L -n)
echo "$list" >&2
assert_eq 2 "$(awk '$1 == "->" && $2 == "10.10.2.2:8080" { print $4 }' <<<"$list")" "rs1 weight after --reload"

# 3) a bad config is refused and changes nothing
echo "virtual_server {" >>"$conf"
if xvsadm_ns --reload 2>"$XE_TMP/bad.err"; then fail "--reload accepted a broken config"; fi
log "broken config refused: $(cat "$XE_TMP/bad.err")"
assert_eq "$list" "$(xvsadm_ns -L -n)" "service table unchanged after a refused reload"
write_conf "1:8080:2 2:8080:3 3:8080:1"

# the new dest takes traffic
http_loop 30 "$XE_TMP/after" "http://$VIP/" 60
assert_eq 0 "$(grep -c '^ERR' "$XE_TMP/after")" "failed requests after reloads"
assert_ge "$(count_lines rs3 "$XE_TMP/after")" 1 "rs3 answers after reload"

conns=$(xvsadm_ns -L -n -c)
echo "$conns" | head -20 >&2
assert_contains "$conns" "$client" "long connection in xvsadm -L -n -c"
assert_contains "$(grep -F "$client" <<<"$conns")" "ESTABLISHED" "long connection ESTABLISHED"

wait "$long_pid"
rc=$?
log "long connection: $(tail -n 1 "$long")"
((rc == 0)) || fail "long connection broke: $(grep -v '^ok' "$long")"
pass "long connection survived SIGHUP and --reload ($(grep -c '^ok' "$long") echoes)"

# 4) expire_nodest_conn on (IPVS's sysctl), applied by reload: a reload that removes the real
# server of a live connection expires that connection at once (flush_dest on the worker).
write_conf_nodest() { # write_conf_nodest "ECHO_RS..."
    { config_head; echo "ipvs_defs { expire_nodest_conn on }"
      vs_block TCP "$VIP" 80 "1:8080:2 2:8080:3 3:8080:1"; vs_block TCP "$VIP" 9000 "$1" rr; } >"$conf"
}
write_conf_nodest "1:7000:1 2:7000:1"
xvsadm_ns --reload || fail "xvsadm --reload (expire_nodest_conn on) failed"
long2=$XE_TMP/long2.out
in_ns "$NS_CL" timeout 30 "$XE_PY" "$XE_LIB_DIR/tcp_longconn.py" "$VIP" 9000 12 >"$long2" 2>&1 &
long2_pid=$!
XE_PIDS+=("$long2_pid")
wait_until 5 grep -q '^ok 1$' "$long2" || fail "second long connection not echoing: $(cat "$long2")"
client2=$(awk '$1 == "connected" { print $3 }' "$long2")
dest2=$(xvsadm_ns -L -n -c | grep -F "$client2" | grep -o '10\.10\.2\.[0-9]*:7000' | head -n 1)
[[ -n $dest2 ]] || fail "no connection of $client2 in xvsadm -L -n -c"
keep=$([[ $dest2 == "$(rs_ip 1):7000" ]] && echo "2:7000:1" || echo "1:7000:1")
log "second long connection from $client2 to $dest2; removing it (keeping $keep)"
write_conf_nodest "$keep"
xvsadm_ns --reload || fail "xvsadm --reload removing $dest2 failed"
conns=$(xvsadm_ns -L -n -c)
assert_not_contains "$conns" "$client2" "connection to the removed $dest2 expired at once"
grep -q "expire_nodest_conn: expired 1 conns of removed real server $dest2" "$XVSD_LOG" ||
    fail "xvsd did not log the flush of $dest2"
pass "xvsd logged the flush of $dest2"
wait "$long2_pid"
rc=$?
((rc != 0)) || fail "the connection to the removed $dest2 still echoed"
pass "the connection to the removed $dest2 ended: $(tail -n 1 "$long2")"
