#!/usr/bin/env bash
# Health checks (issue 13) from the director's kernel address 10.10.2.9 over the exception
# path (XDP pass-through on af_xdp, a TAP on af_packet), keepalived syntax:
#   VIP:80  rr, rs1 TCP_CHECK, rs2 HTTP_GET, sorry_server rs2:8090;
#   VIP:81  the same servers (TCP_CHECK) with quorum 2: one down -> the sorry server;
#   VIP:82  MISC_CHECK: rs1 misc_dynamic (weight = exit code - 2), rs2 inhibit_on_failure.
# Checks: both up; nginx on rs1 stopped during 200 curls -> rs1 leaves VIP:80 within
# delay_loop x (retry + 1) + 1 s, at most the request in flight fails (a refusal by rs1 is
# rescheduled: reschedule_refused), VIP:81 answers from the sorry server; nginx restarted ->
# rs1 returns; misc_dynamic weights and inhibit_on_failure (weight 0, still listed, marked
# inhibited) in `xvsadm -L -n`; `xvsctl check show`; every RS down -> sorry server.
source "$(dirname "$0")/lib.sh"
e2e_init "${1:-build}"

topo_up 2
start_rs_http 1
start_rs_http 2
# The sorry server: a fixed answer on rs2:8090.
mkdir -p "$XE_TMP/sorry"
echo sorry >"$XE_TMP/sorry/index.html"
bg_ns "$(ns_rs 2)" "$XE_TMP/sorry.out" "$XE_PY" -m http.server 8090 --bind "$(rs_ip 2)" \
    --directory "$XE_TMP/sorry"
echo 5 >"$XE_TMP/w1" # misc_dynamic: exit 5 -> weight 3
echo 0 >"$XE_TMP/w2" # exit 0: up
for i in 1 2; do
    printf '#!/bin/sh\nexit "$(cat %s)"\n' "$XE_TMP/w$i" >"$XE_TMP/misc$i.sh"
    chmod +x "$XE_TMP/misc$i.sh"
done
pmd=${XE_PMD:-af_xdp}
CHK="connect_timeout 1 retry 1 delay_before_retry 1"
conf=$XE_TMP/xvs.conf
{
    if [[ $pmd == af_packet ]]; then
        config_head | sed -e 's|\(port lan0 { dev [^ ]*\) }|\1 exception tap xe-lan }|'
    else
        config_head
    fi
    cat <<EOF
virtual_server $VIP 80 {
    delay_loop 1
    lb_algo rr
    lb_kind FNAT
    protocol TCP
    laddr_group_name lips
    sorry_server $(rs_ip 2) 8090
    real_server $(rs_ip 1) 8080 { weight 1  TCP_CHECK { $CHK } }
    real_server $(rs_ip 2) 8080 {
        weight 1
        HTTP_GET { url { path / status_code 200 } $CHK }
    }
}
virtual_server $VIP 81 {
    delay_loop 1
    lb_algo rr
    lb_kind FNAT
    protocol TCP
    laddr_group_name lips
    quorum 2
    sorry_server $(rs_ip 2) 8090
    real_server $(rs_ip 1) 8080 { weight 1  TCP_CHECK { $CHK } }
    real_server $(rs_ip 2) 8080 { weight 1  TCP_CHECK { $CHK } }
}
virtual_server $VIP 82 {
    delay_loop 1
    lb_algo wrr
    lb_kind FNAT
    protocol TCP
    laddr_group_name lips
    real_server $(rs_ip 1) 8080 {
        weight 1
        MISC_CHECK {
            misc_path $XE_TMP/misc1.sh
            misc_timeout 2
            misc_dynamic
        }
    }
    real_server $(rs_ip 2) 8080 {
        weight 1
        inhibit_on_failure
        MISC_CHECK {
            misc_path $XE_TMP/misc2.sh
            misc_timeout 2
        }
    }
}
EOF
} >"$conf"
if [[ $pmd == af_packet ]]; then lan_if=xe-lan; else lan_if=lb-lan; fi
start_xvsd "$conf"
ip -n "$NS_LB" addr add 10.10.2.9/24 dev "$lan_if" || fail "kernel address on $lan_if"
ip -n "$NS_LB" link set "$lan_if" up

# weight_of PORT RS_IP : the weight `xvsadm -L -n` shows for RS_IP:8080 (or :8090) in the
# VIP:PORT service, empty when the service does not list it.
listing() { xvsadm_ns -L -n 2>/dev/null; }
weight_of() {
    listing | awk -v svc="$VIP:$1" -v rs="$2" '
        $1 == "TCP" { cur = ($2 == svc) }
        cur && $1 == "->" && $2 == rs { print $4; exit }'
}
weight_is() { [[ "$(weight_of "$1" "$2")" == "$3" ]]; } # PORT RS:PORT WEIGHT ("" = absent)
both_up() { weight_is 80 "$(rs_ip 1):8080" 1 && weight_is 80 "$(rs_ip 2):8080" 1; }
wait_until 20 both_up ||
    fail "both real servers up in VIP:80: $(listing)"
pass "both real servers checked up over the exception path"

http_loop 20 "$XE_TMP/before.txt" "http://$VIP/" 30
assert_eq 10 "$(count_lines rs1 "$XE_TMP/before.txt")" "rs1 answers before the failure"
assert_eq 10 "$(count_lines rs2 "$XE_TMP/before.txt")" "rs2 answers before the failure"

# misc_dynamic: exit 5 -> weight 3; exit 9 -> weight 7. inhibit_on_failure: exit 1 -> weight 0.
wait_until 10 weight_is 82 $(rs_ip 1):8080 3 ||
    fail "misc_dynamic weight 3: $(listing) $(xvsctl_ns check show 2>&1)"
echo 9 >"$XE_TMP/w1"
echo 1 >"$XE_TMP/w2"
wait_until 10 weight_is 82 $(rs_ip 1):8080 7 ||
    fail "misc_dynamic weight 7: $(listing)"
wait_until 10 weight_is 82 $(rs_ip 2):8080 0 ||
    fail "inhibit_on_failure: rs2 kept with weight 0: $(listing)"
inh=$(listing | awk -v svc="$VIP:82" -v rs="$(rs_ip 2):8080" '
    $1 == "TCP" { cur = ($2 == svc) } cur && $1 == "->" && $2 == rs { print $NF; exit }')
assert_eq inhibited "$inh" "xvsadm -L -n marks the inhibited rs2 of VIP:82"
pass "MISC_CHECK: misc_dynamic weight 3 -> 7, inhibit_on_failure keeps rs2 at weight 0 (marked inhibited)"
shown=$(xvsctl_ns check show 2>&1)
echo "$shown" >&2
assert_contains "$shown" "TCP_CHECK" "check show lists the TCP checks"
assert_contains "$shown" "inhibited" "check show marks the inhibited server"

# nginx on rs1 stops while 200 curls run.
# (paced: 200 requests over about 8 s, so that the failure falls inside the run)
in_ns "$NS_CL" timeout 90 bash -c '
    for ((k = 0; k < 200; k++)); do
        body=$(curl -s --max-time 2 -H "Connection: close" "$1"); rc=$?
        if ((rc == 0)) && [[ -n $body ]]; then echo "$body"; else echo "ERR$rc"; fi
        sleep 0.04
    done' _ "http://$VIP/" >"$XE_TMP/during.txt" &
loop=$!
XE_PIDS+=("$loop")
sleep 1
kill "$(cat "$XE_TMP/rs1/nginx.pid")" || fail "stop nginx on rs1"
t0=$(date +%s.%N)
wait_until 10 weight_is 80 "$(rs_ip 1):8080" "" ||
    fail "rs1 still in VIP:80 10 s after nginx stopped: $(listing)"
t1=$(date +%s.%N)
detect=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f", b - a }')
log "rs1 left VIP:80 ${detect} s after nginx stopped"
assert_float_between "$detect" 0 3.5 "seconds until rs1 left (delay_loop 1 x (retry 1 + 1) + 1)"
wait "$loop"
failed=$(grep -c '^ERR' "$XE_TMP/during.txt" || true)
log "during the failure: $(count_lines rs1 "$XE_TMP/during.txt") rs1, $(count_lines rs2 "$XE_TMP/during.txt") rs2, $failed failed"
# At most the request in flight when nginx died may fail (the curls run one at a time): one
# that rs1 refuses before the check removes it is not told (reschedule_refused), its SYN
# retransmission goes to rs2.
held=$(counter drop_rs_refused_held)
log "refusals held back and rescheduled: ${held:-0}"
((failed <= 1)) || fail "$failed of 200 requests failed while rs1 went down, expected at most the 1 in flight: $(grep -n '^ERR' "$XE_TMP/during.txt" | head -n 5 | tr '\n' ' ')"
http_loop 100 "$XE_TMP/after.txt" "http://$VIP/" 60
assert_eq 100 "$(count_lines rs2 "$XE_TMP/after.txt")" "after rs1 left: every request answered by rs2"
assert_eq 200 "$(wc -l <"$XE_TMP/during.txt")" "requests made during the failure"
# VIP:81 lost its quorum (2): the sorry server answers.
is_sorry() { [[ $(http_get "http://$1/") == sorry ]]; }
wait_until 5 is_sorry "$VIP:81" ||
    fail "VIP:81 below quorum does not answer from the sorry server: $(listing) $(xvsctl_ns check show 2>&1)"
pass "VIP:81 below its quorum answers from the sorry server"

# nginx back on rs1: it returns to VIP:80 and VIP:81 regains its quorum.
bg_ns "$(ns_rs 1)" "$XE_TMP/rs1/nginx2.out" nginx -c "$XE_TMP/rs1/nginx.conf"
wait_until 10 weight_is 80 $(rs_ip 1):8080 1 ||
    fail "rs1 did not return to VIP:80: $(listing)"
http_loop 20 "$XE_TMP/back.txt" "http://$VIP/" 30
assert_eq 10 "$(count_lines rs1 "$XE_TMP/back.txt")" "rs1 answers again"
not_sorry() { [[ $(http_get "http://$VIP:81/") != sorry ]]; }
wait_until 10 not_sorry || true # checked just below
got=$(http_get "http://$VIP:81/")
[[ $got == rs1 || $got == rs2 ]] || fail "VIP:81 with its quorum back answered '$got'"
pass "rs1 returned; VIP:81 back on its real servers"

# Every real server down: the sorry server answers VIP:80.
kill "$(cat "$XE_TMP/rs1/nginx.pid")" "$(cat "$XE_TMP/rs2/nginx.pid")" || fail "stop nginx"
wait_until 10 weight_is 80 "$(rs_ip 2):8090" 1 ||
    fail "the sorry server did not take VIP:80: $(listing)"
http_loop 10 "$XE_TMP/sorry.txt" "http://$VIP/" 30
assert_eq 10 "$(count_lines sorry "$XE_TMP/sorry.txt")" "all real servers down: the sorry server answers"
stop_xvsd
pass "health checks on $pmd: failover in ${detect} s, $failed of 200 requests lost during it"
