#!/usr/bin/env bash
# Restart: requests work, SIGTERM stops xvsd cleanly (exit 0, within 10 s, socket gone),
# xvsd restarted with the same config serves again.
source "$(dirname "$0")/lib.sh"
e2e_init "${1:-build}"

topo_up 2
start_rs_http 1
start_rs_http 2
conf=$XE_TMP/xvs.conf
{ config_head; vs_block TCP "$VIP" 80 "1:8080:1 2:8080:1" rr; } >"$conf"

for round in 1 2 3; do
    start_xvsd "$conf"
    http_loop 20 "$XE_TMP/r$round" "http://$VIP/" 60
    log "round $round: $(sort "$XE_TMP/r$round" | uniq -c | tr '\n' ' ')"
    if grep -q '^ERR' "$XE_TMP/r$round"; then
        # A known way to fail here: FULLNAT (local address, port) pairs that the RS still holds
        # in TIME_WAIT from before the restart; show both sides so the log says which.
        xvsadm_ns -L -n -c >&2
        for i in 1 2; do
            log "rs$i TIME_WAIT peers: $(in_ns "$(ns_rs "$i")" ss -Htan state time-wait '( sport = :8080 )' |
                awk '{ print $4 }' | sort | tr '\n' ' ')"
        done
    fi
    assert_eq 0 "$(grep -c '^ERR' "$XE_TMP/r$round")" "failed requests in round $round"
    assert_ge "$(count_lines rs1 "$XE_TMP/r$round")" 1 "rs1 answers in round $round"
    assert_ge "$(count_lines rs2 "$XE_TMP/r$round")" 1 "rs2 answers in round $round"
    xvsadm_ns -L -n --stats >&2
    stop_xvsd TERM
    assert_eq 0 "$XVSD_STATUS" "xvsd exit status after SIGTERM"
    if xvsadm_ns -L -n >/dev/null 2>&1; then fail "control socket still answers after exit"; fi
    # nothing answers for the VIP while xvsd is down
    if http_get "http://$VIP/" >/dev/null; then fail "VIP answered with xvsd stopped"; fi
    pass "VIP silent while xvsd is stopped"
done
