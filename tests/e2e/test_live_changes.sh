#!/usr/bin/env bash
# Live changes under traffic: while 600 short requests run, `xvsadm -a` adds rs3, `-e -w 0`
# quiesces rs1 and `-d` deletes rs2. No request fails (but the one in flight at `-d` may: IPVS
# drops the rest of a conn whose real server was removed), and each change shows in who answers:
# rs3 starts answering, rs1 stops getting new connections, rs2 disappears.
source "$(dirname "$0")/lib.sh"
e2e_init "${1:-build}"

topo_up 3
for i in 1 2 3; do start_rs_http "$i"; done
conf=$XE_TMP/xvs.conf
{ config_head; vs_block TCP "$VIP" 80 "1:8080:1 2:8080:1" rr; } >"$conf"
start_xvsd "$conf"
svc=(-t "$VIP:80")

out=$XE_TMP/requests
http_loop 600 "$out" "http://$VIP/" 150 &
loop=$!
XE_PIDS+=("$loop")

# wait_progress N : until N requests have completed (or the loop ended).
wait_progress() {
    local deadline=$((SECONDS + 60))
    while (($(wc -l <"$out") < $1)); do
        kill -0 "$loop" 2>/dev/null || return 0
        ((SECONDS < deadline)) || fail "request loop stuck at $(wc -l <"$out") requests"
        sleep 0.05
    done
}

wait_progress 120
xvsadm_ns -a "${svc[@]}" -r 10.10.2.4:8080 --fullnat -w 1 || fail "xvsadm -a rs3"
mark_add=$(wc -l <"$out")
log "added rs3 after $mark_add requests"
wait_progress $((mark_add + 120))
xvsadm_ns -e "${svc[@]}" -r 10.10.2.2:8080 --fullnat -w 0 || fail "xvsadm -e rs1 -w 0"
mark_quiesce=$(wc -l <"$out")
log "quiesced rs1 after $mark_quiesce requests"
wait_progress $((mark_quiesce + 120))
xvsadm_ns -d "${svc[@]}" -r 10.10.2.3:8080 || fail "xvsadm -d rs2"
mark_del=$(wc -l <"$out")
log "deleted rs2 after $mark_del requests"
wait "$loop"
total=$(wc -l <"$out")
log "answers: $(sort "$out" | uniq -c | tr '\n' ' ')"

# who answered in each phase; +2 skips the request in flight when a change was made
phase() { sed -n "$1,$2p" "$out" | sort | uniq -c | awk '{ printf "%s=%s ", $2, $1 }'; }
p1=$(phase 1 "$mark_add")
p2=$(phase $((mark_add + 2)) "$mark_quiesce")
p3=$(phase $((mark_quiesce + 2)) "$mark_del")
p4=$(phase $((mark_del + 2)) "$total")
log "phase 1 (rs1,rs2): $p1"
log "phase 2 (+rs3): $p2"
log "phase 3 (rs1 weight 0): $p3"
log "phase 4 (rs2 deleted): $p4"

assert_eq 600 "$total" "requests made"
# The request in flight at -d rs2 may time out (its conn's client packets are dropped).
assert_eq "" "$(unexpected_failures "$out" "$((mark_del + 1))-$((mark_del + 1))")" \
    "failed requests, but for the one in flight at -d (all: $(grep -n '^ERR' "$out" | tr '\n' ' '))"
assert_not_contains "$p1" "rs3=" "rs3 silent before it was added"
assert_contains "$p2" "rs3=" "rs3 answers after -a"
assert_not_contains "$p3" "rs1=" "rs1 gets no new connections at weight 0"
assert_contains "$p3" "rs2=" "rs2 still answers before -d"
assert_not_contains "$p4" "rs2=" "rs2 gone after -d"
assert_not_contains "$p4" "rs1=" "rs1 still quiescent"
assert_contains "$p4" "rs3=" "rs3 answers at the end"

list=$(xvsadm_ns -L -n)
echo "$list" >&2
assert_contains "$list" "10.10.2.4:8080" "rs3 listed"
assert_not_contains "$list" "10.10.2.3:8080" "rs2 not listed"
w1=$(awk '$1 == "->" && $2 == "10.10.2.2:8080" { print $4 }' <<<"$list")
assert_eq 0 "${w1:-missing}" "rs1 weight"
