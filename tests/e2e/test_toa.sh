#!/usr/bin/env bash
# TOA (TCP option address) on a FULLNAT VIP with `toa on`, checked on the wire at the RS:
# a capture on the RS sees kind 254 len 8 (client port, client address) as the FIRST option of
# every client packet that acks the RS SYN-ACK and nothing more — the bare third ACK of 20 curl
# requests, and scripted first packets (scapy): ACK+data, a retransmitted ACK+data, FIN+ACK+data,
# out-of-order data, ACK+data with a forged 254 option (removed) — never in a SYN or RST, never
# once the client acks RS data. The client sees the RS's MSS lowered by 8 (1460 -> 1452), and
# `xvsctl stats -a` counts toa_inserted, toa_mss_clamped, toa_forged_removed.
# XE_TOA=off runs the same traffic against a service without `toa on` (the test must FAIL).
source "$(dirname "$0")/lib.sh"
e2e_init "${1:-build}"
need_tools tcpdump nft timeout
[[ -x $BUILD/xvsctl ]] || fail "$BUILD/xvsctl not built"

RS_PORT=8080
FORGED=192.0.2.77  # the address a client forges in its own 254 option (never sent to)
SCAPY_SPORT=41000  # scripted connections use 41000..41006
CURL_N=20
problems=()
problem() { problems+=("$*"); echo "problem: $*" >&2; }

topo_up 1
start_rs_http 1
conf=$XE_TMP/xvs.conf
{
    config_head
    vs_block TCP "$VIP" 80 "1:$RS_PORT:1" | sed "\$i\\    toa ${XE_TOA:-on}"
} >"$conf"
grep -q "toa ${XE_TOA:-on}" "$conf" || fail "toa line missing from $conf"
start_xvsd "$conf"

# Capture at the RS before any traffic: headers only, bounded in packets and time.
pcap=$XE_TMP/rs1.pcap
timeout 50 ip netns exec "$(ns_rs 1)" tcpdump -i rs0 -n -U --immediate-mode -s 256 -c 3000 -w "$pcap" \
    "tcp port $RS_PORT" 2>"$XE_TMP/tcpdump.err" &
tcpdump_pid=$!
XE_PIDS+=("$tcpdump_pid")
wait_until 10 grep -q "listening on" "$XE_TMP/tcpdump.err" ||
    fail "tcpdump did not start: $(cat "$XE_TMP/tcpdump.err")"

# 1. Ordinary clients (Linux stack: SYN, SYN-ACK, bare ACK, then the request).
ports=$XE_TMP/client_ports
: >"$ports"
curl_ok=0
for ((k = 0; k < CURL_N; k++)); do
    r=$(in_ns "$NS_CL" curl -s --max-time 2 -H "Connection: close" \
        -w ' %{local_port}' "http://$VIP/") || true
    if [[ $r =~ ^rs1$'\n'\ ([0-9]+)$ ]]; then
        curl_ok=$((curl_ok + 1))
        echo "${BASH_REMATCH[1]}" >>"$ports"
    else
        log "curl $k: '$r'"
    fi
done
assert_eq "$CURL_N" "$curl_ok" "curl requests answered through the TOA VIP"

# 2. Scripted clients. The client kernel knows nothing of their connections: keep it from
# resetting them (its RSTs to the VIP from the scripted ports are dropped; scapy sends on a
# packet socket, below this hook).
in_ns "$NS_CL" nft -f - <<EOF || fail "nft rule in the client namespace"
table inet xe_toa {
    chain out {
        type filter hook output priority 0; policy accept;
        ip daddr $VIP tcp sport $SCAPY_SPORT-$((SCAPY_SPORT + 99)) tcp flags & rst == rst drop
    }
}
EOF
vip_mac=$(ip -n "$NS_CL" neigh show "$VIP" dev cl0 | awk '{ for (i = 1; i < NF; i++) if ($i == "lladdr") print $(i + 1) }')
[[ -n $vip_mac ]] || fail "no neighbour entry for $VIP in the client namespace"
scripted=$(in_ns "$NS_CL" timeout 40 "$XE_PY" "$XE_LIB_DIR/toa_client.py" cl0 "$vip_mac" "$VIP" 80 \
    "$SCAPY_SPORT" "$FORGED" 2>"$XE_TMP/toa_client.err") ||
    fail "scripted clients failed: $scripted $(tail -n 20 "$XE_TMP/toa_client.err")"
in_ns "$NS_CL" nft delete table inet xe_toa
echo "$scripted" >&2
while read -r _ sport variant synack mss replied http; do
    [[ ${synack#synack=} == 1 ]] || {
        problem "scripted $variant (port $sport): no SYN-ACK"
        continue
    }
    echo "$sport" >>"$ports"
    # The RS offers 1460 (1500 MTU); xvsd lowers it by the TOA length toward the client.
    [[ ${mss#mss=} == 1452 ]] || problem "scripted $variant (port $sport): SYN-ACK MSS ${mss#mss=} at the client, expected 1452 (1460 - 8)"
    [[ ${http#http=} == 1 ]] || problem "scripted $variant (port $sport): no HTTP 200 answer ($replied)"
done < <(grep '^conn ' <<<"$scripted")
assert_eq 7 "$(grep -c '^conn ' <<<"$scripted")" "scripted connections run"

# 3. The capture: stop it (INT flushes), then check every connection the RS saw.
sleep 0.5
kill -INT "$tcpdump_pid" 2>/dev/null
wait "$tcpdump_pid" 2>/dev/null
log "capture: $(tail -n 2 "$XE_TMP/tcpdump.err" | tr '\n' ' ')"
check=$("$XE_PY" "$XE_LIB_DIR/toa_check.py" "$pcap" "$(rs_ip 1)" "$RS_PORT" "$CLIENT_IP" "$ports" "$FORGED" 2>&1)
check_rc=$?
echo "$check" >&2
conns=$(awk '$1 == "CONNS" { print $2 }' <<<"$check")
nprob=$(awk '$1 == "CONNS" { print $6 }' <<<"$check")
((check_rc == 0)) || problem "TOA on the wire at the RS: ${nprob:-?} problem(s) (listed above), first: $(grep -m1 '^problem:' <<<"$check")"
[[ ${conns:-0} -ge $((CURL_N + 7)) ]] || problem "connections seen at the RS: ${conns:-0}, expected >= $((CURL_N + 7))"

# 4. Counters.
stats=$(xvsctl_ns stats -a) || fail "xvsctl stats -a failed"
grep -E '^ *toa_' <<<"$stats" >&2 || echo "$stats" >&2
counter() { awk -v k="$1" '{ for (i = 1; i < NF; i++) if ($i == k || $i == k ":") { print $(i + 1); exit } }' <<<"$stats"; }
inserted=$(counter toa_inserted)
clamped=$(counter toa_mss_clamped)
forged=$(counter toa_forged_removed)
[[ ${inserted:-0} -ge $CURL_N ]] || problem "toa_inserted = ${inserted:-missing}, expected >= $CURL_N"
[[ ${clamped:-0} -ge $((CURL_N + 7)) ]] || problem "toa_mss_clamped = ${clamped:-missing}, expected >= $((CURL_N + 7)) (one per SYN-ACK)"
[[ ${forged:-0} -ge 1 ]] || problem "toa_forged_removed = ${forged:-missing}, expected >= 1"

if ((${#problems[@]})); then
    [[ -n ${XE_KEEP:-} ]] && log "pcap kept: $pcap"
    fail "TOA: ${#problems[@]} problem(s):$(printf '\n  %s' "${problems[@]}")"
fi
pass "TOA first option with the client's address and port on every packet acking the SYN-ACK; MSS 1452; counters"
