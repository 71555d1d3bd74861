#!/usr/bin/env bash
# SYN proxy on a FULLNAT VIP with Linux client defaults (timestamps, SACK, window scaling):
# 500 short HTTP connections all answered (both RS used), a 20 MB download and upload
# sha256-identical (the seq/TS/window translation holds for a long stream), requests not
# delayed by the SYN-ACK's zero window (median time to first byte < 150 ms), TOA right at the
# RS for a syn_proxy + toa VIP (toa_check.py on a capture, 20 curls), then 5 s of a
# bounded random-source SYN flood (hping3) while curl keeps working: >= 95% of requests answered
# and no flood SYN reaches a real server (the RS capture sees only SYNs from local addresses,
# no more than the connections curl made). `xvsctl stats -a` shows the synproxy counters.
# XE_SYNPROXY=off runs the same without syn_proxy (the counter checks must fail);
# XE_SYNPROXY=defer with defer_rs_syn (the RS is opened by the first request byte).
source "$(dirname "$0")/lib.sh"
e2e_init "${1:-build}"
need_tools sha256sum tcpdump hping3
[[ -x $BUILD/xvsctl ]] || fail "$BUILD/xvsctl not built"

topo_up 2
start_rs_http 1
start_rs_http 2
for opt in tcp_timestamps tcp_sack tcp_window_scaling; do
    assert_eq 1 "$(in_ns "$NS_CL" sysctl -n net.ipv4.$opt)" "client $opt (Linux default)"
done
conf=$XE_TMP/xvs.conf
{
    config_head
    defer=off
    [[ ${XE_SYNPROXY:-on} == defer ]] && defer=on
    echo "ipvs_defs { synproxy { synack_options { mss 1452 ttl 63 sack timestamp wscale 7 } rs_syn_max_retry 3 max_ack_saved 3 ack_storm_thresh 10 defer_rs_syn $defer } }"
    if [[ ${XE_SYNPROXY:-on} != off ]]; then
        vs_block TCP "$VIP" 80 "1:8080:1 2:8080:1" rr | sed 's/^    lb_kind FNAT$/&\n    syn_proxy/'
        vs_block TCP "$VIP" 81 "1:8080:1" rr | sed 's/^    lb_kind FNAT$/&\n    syn_proxy\n    toa on/'
    else
        vs_block TCP "$VIP" 80 "1:8080:1 2:8080:1" rr
    fi
} >"$conf"
grep -q syn_proxy "$conf" || log "running WITHOUT syn_proxy"
start_xvsd "$conf"

stats() { xvsctl_ns stats -a; }
counter() { awk -v k="$1" '{ for (i = 1; i < NF; i++) if ($i == k || $i == k ":") { print $(i + 1); exit } }' <<<"$2"; }

# ---- 500 short connections
out=$XE_TMP/requests
http_loop 500 "$out" "http://$VIP/" 120
rs1=$(count_lines rs1 "$out")
rs2=$(count_lines rs2 "$out")
errors=$(grep -c '^ERR' "$out")
log "answers: rs1=$rs1 rs2=$rs2 errors=$errors ($(grep '^ERR' "$out" | sort | uniq -c | tr '\n' ' '))"
assert_eq 0 "$errors" "failed requests through the SYN proxy"
assert_eq 500 "$((rs1 + rs2))" "answers from rs1+rs2"
assert_ge "$rs1" 200 "rs1 answers (rr)"
assert_ge "$rs2" 200 "rs2 answers (rr)"
s=$(stats)
assert_ge "$(counter synproxy_syn_cookie_sent "$s")" 500 "cookie SYN-ACKs sent"
assert_ge "$(counter synproxy_handover "$s")" 500 "RS handshakes handed over"
if [[ $defer == on ]]; then
    assert_ge "$(counter synproxy_ack_deferred "$s")" 500 "handshake ACKs absorbed (defer_rs_syn)"
else
    assert_ge "$(counter synproxy_window_update "$s")" 500 "window updates to clients"
fi

# ---- the client saw window 0 in our SYN-ACK: the window update after the RS hand-over must let
# it send at once. Without it the request waits for a zero-window probe (Linux persist timer,
# >= 200 ms), so 20 requests with a time-to-first-byte median under 150 ms prove the update.
ttfb=$(in_ns "$NS_CL" bash -c 'for k in $(seq 20); do
    curl -s -o /dev/null --max-time 2 -H "Connection: close" -w "%{time_starttransfer}\n" "http://$1/"
    done' _ "$VIP" | sort -n | sed -n 10p)
log "time to first byte, median of 20: ${ttfb:-none} s"
assert_float_between "${ttfb:-9}" 0 0.15 "median time to first byte (s)"

# ---- syn_proxy + toa on (VIP:81 -> rs1 only): TOA in the replayed handshake ACK and every
# packet acking exactly the RS SYN-ACK, checked at the RS with toa_check.py (as test_toa does).
if [[ ${XE_SYNPROXY:-on} != off ]]; then
    check_toa_at_rs1 81 "syn_proxy + toa"
fi

# ---- bulk both ways
want=$(sha256sum <"$XE_TMP/big.bin" | cut -d' ' -f1)
for k in 1 2; do
    t0=$(date +%s.%N)
    in_ns "$NS_CL" curl -s --max-time 30 -H "Connection: close" -o "$XE_TMP/dl" "http://$VIP/big.bin"
    rc=$?
    t1=$(date +%s.%N)
    log "download $k: curl exit $rc, $(stat -c %s "$XE_TMP/dl") bytes, $(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.2f s", b - a }')"
    assert_eq "$want" "$(sha256sum <"$XE_TMP/dl" | cut -d' ' -f1)" "sha256 of 20 MB download $k"
done
check_uploads ""

# ---- 5 s random-source SYN flood while curl runs; RS captures count the SYNs they get
cap_pids=()
for i in 1 2; do
    bg_ns "$(ns_rs "$i")" "$XE_TMP/cap$i.log" tcpdump -i rs0 -n -U --immediate-mode -w "$XE_TMP/rs$i.pcap" \
        "tcp[tcpflags] & tcp-syn != 0 and tcp[tcpflags] & tcp-ack == 0"
    cap_pids+=("$BG_PID")
done
sleep 1
s0=$(stats)
rss0=$(awk '/^VmRSS:/ {print $2}' "/proc/$XVSD_PID/status")
bg_ns "$NS_CL" "$XE_TMP/hping.log" timeout 5 hping3 -S -p 80 -i u20 --rand-source -q "$VIP"
flood_pid=$BG_PID
fout=$XE_TMP/flood_requests
http_loop 100 "$fout" "http://$VIP/" 30 &
loop_pid=$!
wait "$flood_pid" 2>/dev/null
wait "$loop_pid"
sleep 1
for pid in "${cap_pids[@]}"; do kill -INT "$pid" 2>/dev/null; done
sleep 1
s1=$(stats)
rss1=$(awk '/^VmRSS:/ {print $2}' "/proc/$XVSD_PID/status")
ok=$(grep -vc '^ERR' "$fout")
total=$(wc -l <"$fout")
cookies=$(($(counter synproxy_syn_cookie_sent "$s1") - $(counter synproxy_syn_cookie_sent "$s0")))
rs_syns=0
for i in 1 2; do
    n=$(tcpdump -n -r "$XE_TMP/rs$i.pcap" 2>/dev/null | wc -l)
    foreign=$(tcpdump -n -r "$XE_TMP/rs$i.pcap" 2>/dev/null | grep -vc ' IP 10\.10\.2\.10[0-3]\.')
    assert_eq 0 "$foreign" "SYNs at rs$i not from a local address"
    rs_syns=$((rs_syns + n))
done
log "flood: $cookies cookie SYN-ACKs in the window; curl $ok/$total answered; RS saw $rs_syns SYNs; xvsd RSS $rss0 -> $rss1 kB"
assert_ge "$cookies" 10000 "cookie SYN-ACKs during the flood"
assert_ge "$((ok * 100))" "$((total * 95))" "curl success during the flood (>= 95%)"
assert_le "$rs_syns" "$((ok * 2 + 5))" "SYNs at the RS (only curl's connections, retries included)"
# No state per SYN: xvsd's memory stays flat (allow 4 MiB for lazily touched pages).
assert_le "$((rss1 - rss0))" 4096 "xvsd RSS growth in kB during the flood"
echo "$s1" | grep -E '^ *synproxy_' >&2
