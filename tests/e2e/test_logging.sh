#!/usr/bin/env bash
# Logs and daemon mode (issue 16 items 2 and 3). xvsd runs in a private mount namespace whose
# /dev/log is a datagram socket this test's receiver owns (a tmpfs copy of /dev, every entry
# bind-mounted, plus log), so syslog(3) lines arrive here with their priority:
#   foreground with `log_facility local3`: syslog only (nothing on stderr), priority local3;
#   the startup line, a health transition (MISC_CHECK down, then up) logged exactly once each,
#   a SIGHUP reload's change line, an `xvsadm -a` change with its client, and a flood of 50
#   malformed control requests giving at most the bucket (10, +1 a second) of lines plus one
#   "N similar messages suppressed" line whose N makes up the rest;
#   daemon mode: `xvsd -d -S 5 --pid-file F` returns once the control socket answers, F holds
#   the daemon's pid, -S wins over log_facility (local5), a second `xvsd -d` refuses with
#   "xvsd already running (pid N, F)", SIGTERM removes F; a stale F is taken over, and a
#   daemon that cannot start makes `xvsd -d` exit 1 with its reason.
source "$(dirname "$0")/lib.sh"
e2e_init "${1:-build}"
need_tools unshare mount

# ---- the syslog receiver and the private /dev ------------------------------------------------
sock=$XE_TMP/devlog.sock
msgs=$XE_TMP/syslog.txt
# shellcheck disable=SC2016
timeout 300 "$XE_PY" -c '
import os, socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
s.bind(sys.argv[1])
os.chmod(sys.argv[1], 0o666)
with open(sys.argv[2], "w", buffering=1) as out:
    out.write("listening\n")
    while True:
        m = s.recv(65536).decode(errors="replace")
        out.write(m.rstrip("\n").replace("\n", "|") + "\n")
' "$sock" "$msgs" &
XE_PIDS+=("$!")
wait_until 5 grep -q listening "$msgs" || fail "syslog receiver did not start"

# with_devlog CMD... : CMD in a private mount namespace whose /dev/log is $sock. It replaces
# the shell it runs in (so `with_devlog xvsd &` gives xvsd's pid): use it with & or in $(...).
with_devlog() {
    local dev
    dev=$(mktemp -d "$XE_TMP/dev.XXXXXX")
    # shellcheck disable=SC2016
    exec unshare -m --propagation private bash -c '
        d=$1 sock=$2
        shift 2
        mount -t tmpfs -o mode=755 xe-dev "$d" || exit 125
        for e in /dev/* /dev/.[!.]*; do
            [[ -e $e || -L $e ]] || continue
            n=$d/${e#/dev/}
            if [[ -L $e ]]; then
                cp -P "$e" "$n"
            elif [[ -d $e ]]; then
                mkdir "$n" && mount --rbind "$e" "$n"
            else
                touch "$n" && mount --bind "$e" "$n"
            fi
        done
        touch "$d/log" && mount --bind "$sock" "$d/log" || exit 125
        mount --rbind "$d" /dev || exit 125
        exec "$@"' _ "$dev" "$sock" "$@"
}

# syslog_count TEXT : lines received holding TEXT.
syslog_count() { grep -c -F -- "$1" "$msgs" || true; }
syslog_has() { grep -q -F -- "$1" "$msgs"; }

# ---- configuration ---------------------------------------------------------------------------
topo_up 1
start_rs_http 1
echo 0 >"$XE_TMP/w1"
# shellcheck disable=SC2016 # the script reads the file when it runs
printf '#!/bin/sh\nexit "$(cat %s)"\n' "$XE_TMP/w1" >"$XE_TMP/misc1.sh"
chmod +x "$XE_TMP/misc1.sh"
conf=$XE_TMP/xvs.conf
write_conf() { # write_conf [EXTRA real_server line]
    {
        config_head | sed -e 's|^    log_level info|    log_level info\n    log_facility local3|'
        cat <<EOF
virtual_server $VIP 80 {
    delay_loop 1
    lb_algo rr
    lb_kind FNAT
    protocol TCP
    laddr_group_name lips
    real_server $(rs_ip 1) 8080 {
        weight 1
        MISC_CHECK { misc_path $XE_TMP/misc1.sh  misc_timeout 2 }
    }
    ${1:-}
}
EOF
    } >"$conf"
}
write_conf
"$BUILD/xvsd" -t -f "$conf" >/dev/null || fail "xvsd -t refused $(cat "$conf")"

# ---- foreground, log_facility local3 -----------------------------------------------------------
XVSD_RUNS=$((XVSD_RUNS + 1))
XVSD_LOG=$XE_TMP/xvsd.$XVSD_RUNS.log
with_devlog ip netns exec "$NS_LB" "$BUILD/xvsd" -f "$conf" >"$XVSD_LOG" 2>&1 &
XVSD_PID=$!
wait_until 30 xvsadm_ns -L -n || fail "xvsd not answering; stderr: $(tail -5 "$XVSD_LOG")"
wait_until 5 syslog_has "xvsd running" || fail "no 'xvsd running' on syslog: $(tail -5 "$msgs")"
# local3 = 19, info = 6: <158>
start_line=$(grep -m1 -F "xvsd starting: $conf, logging to syslog facility local3" "$msgs")
assert_contains "$start_line" "<158>" "startup line at local3.info"
assert_contains "$start_line" "xvsd[$XVSD_PID]: " "startup line names xvsd and its pid"
# (The EAL still prints its own start-up lines on stdout/stderr.)
assert_eq 0 "$(grep -c -F "xvsd[$XVSD_PID]" "$XVSD_LOG")" "xvsd lines on stderr with a facility and no -l"
pass "foreground with log_facility local3: syslog only, startup line <158>"

# A health transition, logged once each way (the check keeps failing every second meanwhile).
echo 1 >"$XE_TMP/w1"
down="real server $(rs_ip 1):8080 of"
has_down() { grep -F "$down" "$msgs" | grep -q "down (removed)"; }
wait_until 10 has_down || fail "no health down line: $(grep health "$msgs")"
sleep 3
assert_eq 1 "$(grep -c -F "MISC_CHECK of real server $(rs_ip 1):8080" "$msgs")" "MISC_CHECK down lines"
assert_eq 1 "$(grep -F "$down" "$msgs" | grep -c "down (removed)")" "real server down lines"
echo 0 >"$XE_TMP/w1"
has_up() { grep -F "$down" "$msgs" | grep -q " up$"; }
wait_until 10 has_up || fail "no health up line: $(grep health "$msgs")"
sleep 2
assert_eq 2 "$(grep -c -F "MISC_CHECK of real server $(rs_ip 1):8080" "$msgs")" "MISC_CHECK lines (down, up)"
assert_eq 1 "$(grep -F "$down" "$msgs" | grep -c " up$")" "real server up lines"
pass "health transitions logged exactly once: $(grep -F "$down" "$msgs" | sed 's/^<[0-9]*>//' | tr '\n' ' ')"

# A reload's change and an xvsadm change, once each.
write_conf "real_server $(rs_ip 1) 8081 { weight 1 }"
kill -HUP "$XVSD_PID"
wait_until 10 syslog_has "reload: done" || fail "no reload line: $(tail -5 "$msgs")"
assert_eq 1 "$(syslog_count "reload: added real server $(rs_ip 1):8081 to")" "reload change line"
xvsadm_ns -a -t "$VIP:80" -r "$(rs_ip 1):8082" -w 2 || fail "xvsadm -a"
wait_until 5 syslog_has "add_dest" || fail "no add_dest line: $(tail -5 "$msgs")"
line=$(grep -F add_dest "$msgs")
assert_eq 1 "$(syslog_count add_dest)" "add_dest lines"
assert_contains "$line" "control client pid " "the change names its client"
assert_contains "$line" "\"weight\":2" "the change says what it did"
pass "reload change and xvsadm change logged once each"

# A flood of malformed requests: the bucket's lines, then one summary with the rest.
flood=50
"$XE_PY" -c '
import socket, sys
for _ in range(int(sys.argv[2])):
    s = socket.socket(socket.AF_UNIX)
    s.connect(sys.argv[1])
    s.sendall(b"{bad\n")
    s.recv(4096)
    s.close()
' "$XE_SOCK" "$flood" || fail "flood client"
wait_until 5 syslog_has "control socket request problems: " ||
    fail "no suppressed line: $(tail -5 "$msgs")"
sleep 1.5
written=$(syslog_count "request is not valid JSON")
summaries=$(grep -F "control socket request problems: " "$msgs")
suppressed=$(grep -o -E 'problems: [0-9]+ similar' <<<"$summaries" | awk '{ s += $2 } END { print s + 0 }')
log "flood of $flood: $written lines written, $suppressed suppressed; $(sed 's/^<[0-9]*>//' <<<"$summaries")"
assert_ge "$written" 10 "lines written of the flood (the burst)"
assert_le "$written" 12 "lines written of the flood (burst 10, +1 a second)"
assert_eq "$flood" "$((written + suppressed))" "written + suppressed"
assert_contains "$summaries" "similar messages suppressed (at most 10 at once, then 1 per 1000 ms)" \
    "the summary line"
assert_contains "$(grep -m1 -F "request is not valid JSON" "$msgs")" "<156>" "flood lines at local3.warning"
pass "a flood of $flood bad requests: $written lines and a summary of $suppressed"

fg_pid=$XVSD_PID
stop_xvsd TERM
assert_eq 0 "$XVSD_STATUS" "xvsd exit status"
wait_until 3 syslog_has "xvsd[$fg_pid]: stopping" || fail "no stopping line: $(tail -3 "$msgs")"

# ---- daemon mode ---------------------------------------------------------------------------
pidf=$XE_TMP/run/xvsd.pid
mkdir -p "$XE_TMP/run"
t0=$SECONDS
out=$(with_devlog ip netns exec "$NS_LB" "$BUILD/xvsd" -d -S 5 --pid-file "$pidf" -f "$conf" 2>&1)
rc=$?
assert_eq 0 "$rc" "xvsd -d exit status (output: $out)"
assert_eq "" "$out" "xvsd -d output"
xvsadm_ns -L -n >/dev/null || fail "xvsd -d returned before its control socket answered"
[[ -s $pidf ]] || fail "no pid file $pidf"
dpid=$(cat "$pidf")
XVSD_PID=$dpid # the cleanup trap kills it if the test fails from here
assert_eq "$dpid" "$(ip netns pids "$NS_LB" | grep -x "$dpid")" "the pid file's pid runs in the lb namespace"
assert_eq xvsd "$(cat "/proc/$dpid/comm" 2>/dev/null)" "the pid file names xvsd"
ppid=$(awk '{ print $4 }' "/proc/$dpid/stat")
sid=$(awk '{ print $6 }' "/proc/$dpid/stat")
assert_eq "$dpid" "$sid" "the daemon leads its own session"
log "daemon pid $dpid (parent $ppid), ready after $((SECONDS - t0)) s"
wait_until 5 syslog_has "xvsd[$dpid]: xvsd running" || fail "daemon: no running line: $(tail -3 "$msgs")"
# local5 = 21, info = 6: <174>; -S wins over the config's local3.
assert_contains "$(grep -m1 -F "xvsd[$dpid]: xvsd starting" "$msgs")" "<174>" "-S 5 wins over log_facility"
assert_contains "$(grep -m1 -F "xvsd[$dpid]: xvsd starting" "$msgs")" "logging to syslog facility local5" \
    "the startup line names the facility"
pass "xvsd -d returned once ready (pid $dpid in $pidf, own session, syslog local5)"

out=$(with_devlog ip netns exec "$NS_LB" "$BUILD/xvsd" -d --pid-file "$pidf" -f "$conf" 2>&1)
rc=$?
assert_eq 1 "$rc" "a second xvsd -d exit status"
assert_eq "xvsd: xvsd already running (pid $dpid, $pidf)" "$out" "a second xvsd -d refuses"
assert_eq "$dpid" "$(cat "$pidf")" "the pid file after the refusal"
xvsadm_ns -L -n >/dev/null || fail "the running daemon stopped answering"
pass "a second xvsd -d refuses: $out"

kill -TERM "$dpid"
gone() { ! kill -0 "$dpid" 2>/dev/null; }
wait_until 10 gone || fail "the daemon did not exit within 10 s of SIGTERM"
XVSD_PID=""
[[ -e $pidf ]] && fail "pid file still there after SIGTERM: $(cat "$pidf")"
pass "SIGTERM: the daemon exits and removes $pidf"

# A stale pid file is taken over; a daemon that cannot start: `xvsd -d` fails with its reason.
echo 999999 >"$pidf"
sed -e 's|iface=lb-wan|iface=xe-nosuch|' "$conf" >"$XE_TMP/broken.conf"
out=$(with_devlog ip netns exec "$NS_LB" "$BUILD/xvsd" -d --pid-file "$pidf" -f "$XE_TMP/broken.conf" 2>&1)
rc=$?
assert_eq 1 "$rc" "xvsd -d with a port that cannot open: exit status"
assert_contains "$out" "xvsd: cannot start:" "the parent prints the daemon's reason"
assert_contains "$out" "port wan0" "the reason names the port"
wait_until 5 syslog_has "taken over from pid 999999" || fail "no takeover line: $(tail -3 "$msgs")"
[[ -e $pidf ]] && fail "pid file left by a daemon that failed to start"
pass "stale pid file taken over; a failed start reported by xvsd -d: $(head -2 <<<"$out" | tr '\n' ' ')"
