#!/usr/bin/env bash
# systemd (issue 16 item 3): contrib/systemd/xvsd.service passes `systemd-analyze verify`
# (the build's xvsd in place of /usr/sbin/xvsd; a unit with a misspelt key does not). xvsd
# started the way systemd starts a Type=notify service with WatchdogSec=2 (NOTIFY_SOCKET,
# WATCHDOG_USEC) says READY=1 with its STATUS once its control socket answers, feeds the
# watchdog every half period, says RELOADING=1 then READY=1 around a SIGHUP reload, and
# STOPPING=1 on SIGTERM. The notify socket is a datagram listener of the test's own. A worker
# thread stopped on its own (ptrace) for 4 s is logged as stuck once, no WATCHDOG=1 goes out
# while it is, and the pings resume when it runs again.
source "$(dirname "$0")/lib.sh"
e2e_init "${1:-build}"
need_tools systemd-analyze

# ---- the unit -------------------------------------------------------------------------------
unit=$XE_TMP/xvsd.service
sed -e "s|/usr/sbin/xvsd|$BUILD/xvsd|g" -e '/^ConditionPathExists=/d' \
    "$XE_LIB_DIR/../../contrib/systemd/xvsd.service" >"$unit"
out=$(systemd-analyze verify "$unit" 2>&1)
rc=$?
assert_eq 0 "$rc" "systemd-analyze verify xvsd.service exit status (output: $out)"
assert_eq "" "$out" "systemd-analyze verify xvsd.service output"
sed -e 's/^Type=notify/Typ=notify/' "$unit" >"$XE_TMP/bad.service"
out=$(systemd-analyze verify "$XE_TMP/bad.service" 2>&1)
assert_contains "$out" "Unknown key 'Typ'" "verify catches a misspelt key"
pass "contrib/systemd/xvsd.service verifies"

# ---- Type=notify and the watchdog -----------------------------------------------------------
topo_up 1
start_rs_http 1
conf=$XE_TMP/xvs.conf
{ config_head; vs_block TCP "$VIP" 80 "1:8080:1" rr; } >"$conf"
sock=$XE_TMP/notify.sock
msgs=$XE_TMP/notify.log
# shellcheck disable=SC2016
timeout 60 "$XE_PY" -c '
import socket, sys, time
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
s.bind(sys.argv[1])
s.settimeout(1)
with open(sys.argv[2], "w", buffering=1) as out:
    out.write("listening\n")
    while True:
        try:
            m = s.recv(4096).decode()
        except socket.timeout:
            continue
        out.write("%.3f %s\n" % (time.monotonic(), m.replace("\n", "|")))
        if m.startswith("STOPPING=1"):
            break
' "$sock" "$msgs" &
XE_PIDS+=("$!")
wait_until 5 grep -q listening "$msgs" || fail "notify listener did not start"
NOTIFY_SOCKET=$sock WATCHDOG_USEC=2000000 start_xvsd "$conf"
wait_until 5 grep -q "READY=1" "$msgs" || fail "no READY=1 from xvsd: $(tr '\n' ' ' <"$msgs")"
assert_contains "$(grep -m1 READY=1 "$msgs")" "STATUS=running: 1 virtual services, 1 workers" \
    "READY=1 carries the status"
assert_contains "$(cat "$XVSD_LOG")" "systemd watchdog: fed every 1000 ms" "xvsd logs the watchdog"
sleep 3
pings=$(grep -c "WATCHDOG=1" "$msgs")
log "watchdog pings in the first ~3 s: $pings"
assert_ge "$pings" 2 "WATCHDOG=1 every 1 s (WatchdogSec=2): pings in 3 s"
((pings <= 6)) || fail "$pings watchdog pings in about 3 s: more often than every 1 s"
# Gaps between pings stay under the 2 s period (the loop wakes at least every 200 ms).
gap=$(awk '/WATCHDOG=1/ { if (t) { d = $1 - t; if (d > m) m = d } t = $1 } END { printf "%.2f", m }' "$msgs")
assert_float_between "$gap" 0 1.9 "longest gap between watchdog pings (s)"
pass "READY=1 with its status, WATCHDOG=1 every half period (longest gap $gap s)"

kill -HUP "$XVSD_PID"
ready_twice() { (($(grep -c 'READY=1' "$msgs") >= 2)); }
wait_until 5 ready_twice || fail "no READY=1 after the reload: $(tr '\n' ' ' <"$msgs")"
order=$(grep -o -E '(RELOADING|READY)=1' "$msgs" | tr '\n' ' ')
assert_eq "READY=1 RELOADING=1 READY=1 " "$order" "READY, RELOADING, READY in that order"
assert_contains "$(grep RELOADING=1 "$msgs")" "MONOTONIC_USEC=" "RELOADING=1 carries MONOTONIC_USEC"
http_loop 4 "$XE_TMP/after_reload.txt" "http://$VIP/" 30
assert_eq 4 "$(count_lines rs1 "$XE_TMP/after_reload.txt")" "requests answered after the reload"
pass "SIGHUP: RELOADING=1, then READY=1 again"

# A stuck worker withholds the watchdog: the worker thread alone is stopped with ptrace
# (PTRACE_SEIZE + PTRACE_INTERRUPT stop only that thread; SIGSTOP would stop the whole
# process, control thread included) for 4 s, then released.
tid=""
for t in /proc/"$XVSD_PID"/task/*; do
    [[ $(cat "$t/comm" 2>/dev/null) == xvs-worker-0 ]] && tid=${t##*/}
done
[[ -n $tid ]] || fail "no thread named xvs-worker-0 in xvsd: $(cat /proc/"$XVSD_PID"/task/*/comm | tr '\n' ' ')"
stall=$XE_TMP/stall.txt
"$XE_PY" -c '
import ctypes, os, sys, time
libc = ctypes.CDLL(None, use_errno=True)
libc.ptrace.argtypes = [ctypes.c_long, ctypes.c_long, ctypes.c_void_p, ctypes.c_void_p]
PTRACE_DETACH, PTRACE_SEIZE, PTRACE_INTERRUPT, WALL = 17, 0x4206, 0x4207, 0x40000000
tid = int(sys.argv[1])
if libc.ptrace(PTRACE_SEIZE, tid, None, None) != 0:
    sys.exit("PTRACE_SEIZE: " + os.strerror(ctypes.get_errno()))
libc.ptrace(PTRACE_INTERRUPT, tid, None, None)
os.waitpid(tid, WALL)
print("stopped %.3f" % time.monotonic(), flush=True)
time.sleep(float(sys.argv[2]))
libc.ptrace(PTRACE_DETACH, tid, None, None)
print("released %.3f" % time.monotonic(), flush=True)
' "$tid" 4 >"$stall" 2>&1 || fail "could not stop the worker thread: $(cat "$stall")"
stopped=$(awk '/^stopped/ { print $2 }' "$stall")
released=$(awk '/^released/ { print $2 }' "$stall")
assert_contains "$(cat "$XVSD_LOG")" "worker 0: stuck, no loop iteration for" "the stuck worker is logged"
assert_contains "$(cat "$XVSD_LOG")" "the systemd watchdog is no longer fed" "and the watchdog withheld"
assert_eq 1 "$(grep -c "worker 0: stuck" "$XVSD_LOG")" "stuck lines (once)"
# Stuck after the 1 s stall limit (half of WatchdogSec=2) and the 200 ms tick: no ping from
# 1.5 s after the stop until the release.
withheld=$(awk -v from="$stopped" -v to="$released" \
    '/WATCHDOG=1/ && $1 > from + 1.5 && $1 < to { n++ } END { print n + 0 }' "$msgs")
assert_eq 0 "$withheld" "watchdog pings while worker 0 was stuck (after 1.5 s)"
wait_until 3 grep -q "worker 0: running again after" "$XVSD_LOG" ||
    fail "no recovery line: $(tail -3 "$XVSD_LOG")"
resumed() { awk -v to="$released" '/WATCHDOG=1/ && $1 > to { n++ } END { exit !(n > 0) }' "$msgs"; }
wait_until 3 resumed || fail "no watchdog ping after the worker was released"
http_loop 4 "$XE_TMP/after_stall.txt" "http://$VIP/" 30
assert_eq 4 "$(count_lines rs1 "$XE_TMP/after_stall.txt")" "requests answered after the stall"
pass "a stuck worker (ptrace-stopped 4 s) is logged once and the watchdog withheld; pings resume"

stop_xvsd TERM
assert_eq 0 "$XVSD_STATUS" "xvsd exit status"
wait_until 3 grep -q "STOPPING=1" "$msgs" || fail "no STOPPING=1: $(tr '\n' ' ' <"$msgs")"
pass "systemd notify: READY, WATCHDOG, RELOADING/READY, STOPPING"
