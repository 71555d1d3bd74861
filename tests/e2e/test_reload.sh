#!/usr/bin/env bash
# Config reload without dropping connections: a long-lived TCP connection through VIP:9000
# (line echo on the RS) keeps working while the config changes twice, once applied by SIGHUP
# (rs3 added, rs2's weight changed) and once by `xvsadm --reload` (rs1's weight changed).
# The new values show in `xvsadm -L -n`, rs3 answers, and `xvsadm -L -n -c` shows the
# long connection.
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
