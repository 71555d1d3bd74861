#!/usr/bin/env bash
# 500 short HTTP connections through a FULLNAT VIP with wrr weights 1:2: every request
# answered, the split close to 1:2, and xvsadm --stats counting the connections per dest.
source "$(dirname "$0")/lib.sh"
e2e_init "${1:-build}"

topo_up 2
start_rs_http 1
start_rs_http 2
conf=$XE_TMP/xvs.conf
{ config_head; vs_block TCP "$VIP" 80 "1:8080:1 2:8080:2"; } >"$conf"
start_xvsd "$conf"

out=$XE_TMP/requests
http_loop 500 "$out" "http://$VIP/" 120
total=$(wc -l <"$out")
rs1=$(count_lines rs1 "$out")
rs2=$(count_lines rs2 "$out")
errors=$(grep -c '^ERR' "$out")
log "answers: rs1=$rs1 rs2=$rs2 errors=$errors ($(grep '^ERR' "$out" | sort | uniq -c | tr '\n' ' '))"
assert_eq 500 "$total" "requests made"
assert_eq 0 "$errors" "failed requests"
assert_eq 500 "$((rs1 + rs2))" "answers from rs1+rs2"
ratio=$(awk -v a="$rs2" -v b="$rs1" 'BEGIN { printf "%.2f", (b ? a / b : 99) }')
assert_float_between "$ratio" 1.7 2.3 "rs2/rs1 split for weights 2:1"

stats=$(xvsadm_ns -L -n --stats --exact) || fail "xvsadm -L -n --stats failed"
echo "$stats" >&2
# TCP  10.10.1.100:80   <conns> <inpkts> ...  and one "  -> RS:PORT <conns> ..." per dest
svc_conns=$(awk -v k="$VIP:80" '$1 == "TCP" && $2 == k { print $3 }' <<<"$stats")
d1=$(awk '$1 == "->" && $2 == "10.10.2.2:8080" { print $3 }' <<<"$stats")
d2=$(awk '$1 == "->" && $2 == "10.10.2.3:8080" { print $3 }' <<<"$stats")
assert_ge "${svc_conns:-0}" 500 "service conns in --stats"
assert_eq "$rs1" "${d1:-missing}" "rs1 conns in --stats"
assert_eq "$rs2" "${d2:-missing}" "rs2 conns in --stats"
