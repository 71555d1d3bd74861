#!/usr/bin/env bash
# Exhaustion end to end: a spoofed SYN flood without syn_proxy (hping3 --rand-source, bounded
# in count and time, to the VIP) fills a small connection table (conn_table_size 4096, each
# flood SYN takes a conn) while xvsd stays alive and counts the refused SYNs under
# drop_conn_pool_full; once the flood stops and its conns expire (syn_recv 3 s), 100 real
# curls all get through. Two rounds: xvsd's RSS grows by no more than the memory its
# configured sizes cost (printed at startup), and by < 8 MiB in the second.
source "$(dirname "$0")/lib.sh"
e2e_init "${1:-build}"
need_tools hping3
[[ -x $BUILD/xvsctl ]] || fail "$BUILD/xvsctl not built"
conns() { xvsadm_ns -L -n -c | grep -c '^TCP' || true; }
rss_kb() { awk '/^VmRSS:/ {print $2}' "/proc/$XVSD_PID/status"; }
TABLE=4096
MBUFS=${XE_MBUFS:-8192} # XE_MBUFS=2752: the minimum for one worker must serve too

topo_up 2
start_rs_http 1
start_rs_http 2
conf=$XE_TMP/xvs.conf
{
    config_head | sed "/^netif_defs {/a\\    mbufs_per_port $MBUFS"
    cat <<EOF
ipvs_defs {
    conn_table_size $TABLE
    timeouts { syn_recv 3 }
}
EOF
    vs_block TCP "$VIP" 80 "1:8080:1 2:8080:1" rr
} >"$conf"
start_xvsd "$conf"

# The configured sizes and what they cost, from the startup log.
table_line=$(grep -o "conn table $TABLE entries = [0-9.]* MiB" "$XVSD_LOG") ||
    fail "no conn table memory line in $XVSD_LOG"
mbuf_lines=$(grep -o "mbufs per port $MBUFS = [0-9.]* MiB" "$XVSD_LOG")
assert_eq 2 "$(echo "$mbuf_lines" | grep -c MiB)" "mbufs per port memory lines (one per port)"
log "startup: $table_line; $(echo "$mbuf_lines" | head -n 1) (x2 ports)"
# Bound on RSS growth: everything the sizes cost (pages the EAL reserved are touched lazily,
# so a pool's first use may show up in RSS) plus 8 MiB for the rest.
budget_kb=$(echo "$table_line $mbuf_lines" | grep -o '[0-9.]* MiB' |
    awk '{ s += $1 } END { printf "%d", s * 1024 + 8192 }')

http_loop 10 "$XE_TMP/warm" "http://$VIP/" 30
assert_eq 0 "$(grep -c '^ERR' "$XE_TMP/warm")" "warm-up requests failed"
rss0=$(rss_kb)

round() { # round N : flood, table full, expiry, 100 curls
    local n=$1 refused0 refused peak ok
    refused0=$(counter drop_conn_pool_full)
    # 30000 SYNs at ~20 kpps, at most 8 s: several times the table.
    bg_ns "$NS_CL" "$XE_TMP/hping$n.log" timeout 8 hping3 -S -p 80 -i u50 -c 30000 --rand-source -q "$VIP"
    local flood_pid=$BG_PID peak=0 c
    while kill -0 "$flood_pid" 2>/dev/null; do
        c=$(conns)
        ((c > peak)) && peak=$c
        kill -0 "$XVSD_PID" 2>/dev/null || fail "xvsd died during flood $n"
        sleep 0.5
    done
    wait "$flood_pid" 2>/dev/null
    kill -0 "$XVSD_PID" 2>/dev/null || fail "xvsd died during flood $n"
    refused=$(($(counter drop_conn_pool_full) - ${refused0:-0}))
    log "round $n: conn table peaked at $peak of $TABLE, $refused SYNs refused (drop_conn_pool_full)"
    assert_ge "$peak" $((TABLE * 9 / 10)) "conns in the table during flood $n"
    assert_le "$peak" "$TABLE" "conns never beyond conn_table_size"
    assert_ge "$refused" 1000 "SYNs counted under drop_conn_pool_full in flood $n"
    # The flood's conns expire by themselves (syn_recv 3 s; RS SYN-ACK retransmissions
    # refresh some for a while).
    wait_until 60 bash -c "(( \$(XVS_SOCKET=$XE_SOCK $BUILD/xvsadm -L -n -c | grep -c '^TCP') < 50 ))" ||
        fail "flood $n conns did not expire: $(conns) left"
    log "round $n: $(conns) conns left after expiry"
    http_loop 100 "$XE_TMP/after$n" "http://$VIP/" 120
    ok=$(grep -vc '^ERR' "$XE_TMP/after$n")
    assert_eq 100 "$ok" "curls answered after flood $n"
}

round 1
rss1=$(rss_kb)
round 2
rss2=$(rss_kb)
log "xvsd RSS: $rss0 kB before, $rss1 kB after round 1, $rss2 kB after round 2 (budget $budget_kb kB)"
assert_le "$((rss1 - rss0))" "$budget_kb" "RSS growth in round 1 (kB)"
assert_le "$((rss2 - rss0))" "$budget_kb" "RSS growth over both rounds (kB)"
# A second flood of 30000 SYNs costs (almost) nothing new: 8 MiB is < 300 bytes per SYN.
assert_le "$((rss2 - rss1))" 8192 "RSS growth in round 2 (kB): memory is bounded"
xvsctl_ns stats -a | grep -E '^ *(drop_conn_pool_full|drop_conn_table_full|drop_martian_source|conns_created|conns_expired|drop_mbuf_alloc|drop_tx_full)' >&2
pass "conn table filled by a spoofed SYN flood, xvsd alive, 2 x 100 curls served after expiry, RSS $rss0 -> $rss2 kB"
