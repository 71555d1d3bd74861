#!/usr/bin/env bash
# Packet capture at named points (issue 16 item 5): `xvsctl capture` against a FULLNAT VIP
# (rs1, rs2). drop drop_tcp_no_conn while hping3 sends 5 bare ACKs that match no connection:
# the pcap (read back by tcpdump) holds exactly those 5 frames - client to VIP:80, flag ACK
# only - and the counter moved by exactly 5 meanwhile. rx on wan0 with a tcpdump filter for
# SYNs while 10 curls run: 10 SYNs from the client to the VIP, nothing else. tx on lan0 with a
# filter for SYNs: the RS-side SYNs, from local addresses to the real servers (FULLNAT). Bad
# requests are refused with what to do (a reason reassembly cannot capture, a filter libpcap
# rejects, an unknown port, a second capture while one runs), and a capture whose xvsctl was
# killed is ended by xvsd within seconds, after which a new one works.
source "$(dirname "$0")/lib.sh"
e2e_init "${1:-build}"
need_tools curl hping3 tcpdump

topo_up 2
start_rs_http 1
start_rs_http 2
conf=$XE_TMP/xvs.conf
{ config_head; vs_block TCP "$VIP" 80 "1:8080:1 2:8080:1" rr; } >"$conf"
start_xvsd "$conf"

# capture_bg NAME ARGS...: xvsctl capture in the lb namespace, in the background, waiting
# until xvsd has armed it (its log line). Sets CAP_PID.
captures=0
capture_bg() {
    local name=$1
    shift
    captures=$((captures + 1))
    XVS_SOCKET=$XE_SOCK timeout 60 "$BUILD/xvsctl" capture "$@" >"$XE_TMP/$name.out" 2>"$XE_TMP/$name.err" &
    CAP_PID=$!
    wait_until 10 grep -q "capture $captures started" "$XVSD_LOG" ||
        fail "capture $name not armed: $(cat "$XE_TMP/$name.err")"
}
counter_now() { counter "$1" || echo 0; }

# ---- drop: exactly the dropped frames ----------------------------------------------------------
before=$(counter_now drop_tcp_no_conn)
capture_bg drop drop drop_tcp_no_conn -w "$XE_TMP/drop.pcap" -c 5 -t 20
in_ns "$NS_CL" timeout 10 hping3 -q -A -c 5 -i u20000 -s 31000 -p 80 "$VIP" >/dev/null 2>&1
wait "$CAP_PID" || fail "xvsctl capture drop exited $?: $(cat "$XE_TMP/drop.err")"
after=$(counter_now drop_tcp_no_conn)
assert_eq 5 "$((after - before))" "drop_tcp_no_conn moved during the capture"
tcpdump -r "$XE_TMP/drop.pcap" -nn 2>/dev/null >"$XE_TMP/drop.txt" || fail "tcpdump cannot read drop.pcap"
assert_eq 5 "$(wc -l <"$XE_TMP/drop.txt")" "frames in drop.pcap"
assert_eq 5 "$(grep -cE "IP 10\.10\.1\.2\.310[0-4][0-9] > $VIP\.80: Flags \[\.\]," "$XE_TMP/drop.txt")" \
    "hping3's ACKs (client:31000+ > VIP:80, ACK only) in drop.pcap"
assert_contains "$(cat "$XE_TMP/drop.err")" "5 frames written" "xvsctl's summary"
pass "drop capture: exactly the 5 dropped ACKs"

# ---- rx with a filter: the client's SYNs ------------------------------------------------------
capture_bg rx rx port wan0 filter "tcp dst port 80 and tcp[tcpflags] & tcp-syn != 0" \
    -w "$XE_TMP/rx.pcap" -c 10 -t 30
http_loop 10 "$XE_TMP/http"
assert_eq 10 "$(grep -c '^rs[12]$' "$XE_TMP/http")" "requests answered while capturing"
wait "$CAP_PID" || fail "xvsctl capture rx exited $?: $(cat "$XE_TMP/rx.err")"
tcpdump -r "$XE_TMP/rx.pcap" -nn 2>/dev/null >"$XE_TMP/rx.txt" || fail "tcpdump cannot read rx.pcap"
assert_eq 10 "$(wc -l <"$XE_TMP/rx.txt")" "frames in rx.pcap"
assert_eq 10 "$(grep -cE "IP 10\.10\.1\.2\.[0-9]+ > $VIP\.80: Flags \[S\]," "$XE_TMP/rx.txt")" \
    "client SYNs to the VIP in rx.pcap"
pass "rx capture with a tcpdump filter: the 10 client SYNs"

# ---- tx on the LAN port: the SYNs to the real servers, from local addresses ------------------
capture_bg tx tx port lan0 filter "tcp[tcpflags] & (tcp-syn|tcp-ack) == tcp-syn" \
    -w "$XE_TMP/tx.pcap" -c 4 -t 30
http_loop 4 "$XE_TMP/http2"
wait "$CAP_PID" || fail "xvsctl capture tx exited $?: $(cat "$XE_TMP/tx.err")"
tcpdump -r "$XE_TMP/tx.pcap" -nn 2>/dev/null >"$XE_TMP/tx.txt" || fail "tcpdump cannot read tx.pcap"
assert_eq 4 "$(wc -l <"$XE_TMP/tx.txt")" "frames in tx.pcap"
assert_eq 4 "$(grep -cE "IP 10\.10\.2\.10[0-3]\.[0-9]+ > 10\.10\.2\.[23]\.8080: Flags \[S\]," "$XE_TMP/tx.txt")" \
    "SYNs from local addresses to rs1/rs2:8080 in tx.pcap"
pass "tx capture on lan0: the FULLNAT SYNs to the real servers"

# ---- refusals ----------------------------------------------------------------------------------
refused() { # refused WHAT EXPECTED ARGS...: xvsctl capture ARGS exits 255 saying EXPECTED
    local what=$1 want=$2 out rc
    shift 2
    out=$(XVS_SOCKET=$XE_SOCK timeout 10 "$BUILD/xvsctl" capture "$@" -w "$XE_TMP/x.pcap" -c 1 -t 2 2>&1)
    rc=$?
    assert_eq 255 "$rc" "exit status of a capture $what"
    assert_contains "$out" "$want" "refusal of a capture $what"
}
refused "of drop_frag_timeout" "cannot be captured" drop drop_frag_timeout
refused "with a bad filter" "filter 'tcp port'" rx filter "tcp port"
refused "on an unknown port" "No such device" rx port nosuch0
refused "of an unknown reason" "no drop reason" drop drop_nonexistent
capture_bg hold rx -w "$XE_TMP/hold.pcap" -t 30
refused "while another runs" "a capture is running" rx
pkill -KILL -P "$CAP_PID"  # xvsctl itself (CAP_PID is its `timeout`): no capture_stop sent
wait "$CAP_PID" 2>/dev/null
wait_until 12 grep -q "capture $captures stopped: no client read it" "$XVSD_LOG" ||
    fail "the orphaned capture was not ended by xvsd"
capture_bg after rx filter "tcp dst port 80" -w "$XE_TMP/after.pcap" -c 1 -t 20
http_loop 1 "$XE_TMP/http3"
wait "$CAP_PID" || fail "a capture after the orphaned one exited $?: $(cat "$XE_TMP/after.err")"
assert_eq 1 "$(tcpdump -r "$XE_TMP/after.pcap" -nn 2>/dev/null | wc -l)" "frames in after.pcap"
pass "refusals, and an orphaned capture ended by xvsd"
