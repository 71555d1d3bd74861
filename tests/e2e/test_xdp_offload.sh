#!/usr/bin/env bash
# The XDP flow fast path (`netif_defs { xdp_offload N }`, lb/offload.h) on net_af_xdp ports:
#  - a 20 MB download and a 20 MB upload through a FULLNAT VIP are byte-identical, the conns
#    are handed to the XDP program (xdp_offloaded) and taken back at their FIN
#    (xdp_taken_back), and most of their segments never reach xvs (lb_forwarded far below
#    the packets the service counted), yet the service's counters hold every byte;
#  - a conn whose traffic all goes by XDP outlives its idle timeout while it talks (the slots'
#    last-packet times move its deadline), and expires once it is quiet.
# The veth peers of the lb's ports get GRO on: a veth takes XDP redirects only with NAPI on
# its peer (a NIC driver takes them as they are).
# e2e: af_xdp
source "$(dirname "$0")/lib.sh"
e2e_init "${1:-build}"
need_tools sha256sum ethtool

topo_up 1
# NAPI on the peers of lb-wan and lb-lan, so frames the XDP program redirects there are taken.
in_ns "$NS_CL" ethtool -K cl0 gro on >/dev/null
in_ns "$NS_SW" ethtool -K sw-lb gro on >/dev/null
start_rs_http 1
start_rs_echo 1 7000
conf=$XE_TMP/xvs.conf
{
    XE_NETIF_EXTRA="    xdp_offload 16" config_head
    vs_block TCP "$VIP" 80 "1:8080:1" rr
    vs_block TCP "$VIP" 7000 "1:7000:1" rr
} >"$conf"
start_xvsd "$conf"
grep -q "XDP flow fast path on" "$XVSD_LOG" || fail "xvsd did not switch the fast path on: $(cat "$XVSD_LOG")"

want=$(sha256sum <"$XE_TMP/big.bin" | cut -d' ' -f1)
in_ns "$NS_CL" curl -s --max-time 30 -H "Connection: close" -o "$XE_TMP/dl" "http://$VIP/big.bin"
got=$(sha256sum <"$XE_TMP/dl" | cut -d' ' -f1)
assert_eq "$want" "$got" "sha256 of the 20 MB download"
check_uploads ""

for ((k = 0; k < 50; k++)); do # the last FIN's take-back: within a poll or two
    (($(counter xdp_taken_back) >= 3)) && break
    sleep 0.1
done
offloaded=$(counter xdp_offloaded)
taken_back=$(counter xdp_taken_back)
forwarded=$(counter lb_forwarded)
stats=$(xvsadm_ns -L -n --stats --exact)
echo "$stats" >&2
log "xdp_offloaded $offloaded xdp_taken_back $taken_back lb_forwarded $forwarded failed $(counter xdp_offload_failed)"
assert_ge "${offloaded:-0}" 3 "conns handed to XDP (a download, two uploads)"
assert_ge "${taken_back:-0}" 3 "conns taken back at their FIN"
in_pkts=$(awk -v k="$VIP:80" '$1 == "TCP" && $2 == k { print $4 }' <<<"$stats")
out_pkts=$(awk -v k="$VIP:80" '$1 == "TCP" && $2 == k { print $5 }' <<<"$stats")
in_bytes=$(awk -v k="$VIP:80" '$1 == "TCP" && $2 == k { print $6 }' <<<"$stats")
out_bytes=$(awk -v k="$VIP:80" '$1 == "TCP" && $2 == k { print $7 }' <<<"$stats")
assert_ge "${in_bytes:-0}" $((40 * 1024 * 1024)) "service InBytes hold the uploads (XDP slots folded in)"
assert_ge "${out_bytes:-0}" $((20 * 1024 * 1024)) "service OutBytes hold the download"
# 60 MB in 1448-byte segments is ~43,000 data segments plus their ACKs; xvs itself forwards
# the handshakes, the first 16 packets of each conn and the FINs.
total=$((in_pkts + out_pkts))
assert_ge "$total" 43000 "service packets (both ways)"
assert_le "${forwarded:-0}" $((total / 10)) "packets xvs forwarded itself (the rest went by XDP)"

# Idle timeout with the traffic on XDP: established 3 s; the conn talks for 8 s (a line every
# 0.5 s, each echoed), so only the XDP slots show it alive.
xvsadm_ns --set 3 2 2 || fail "xvsadm --set"
before=$(counter xdp_offloaded)
in_ns "$NS_CL" timeout 30 "$XE_PY" "$XE_LIB_DIR/tcp_longconn.py" "$VIP" 7000 8 >"$XE_TMP/long.out" 2>&1
rc=$?
tail -n 2 "$XE_TMP/long.out" >&2
assert_eq 0 "$rc" "the long conn's every line echoed for 8 s (3 s idle timeout)"
assert_ge "$(counter xdp_offloaded)" $((before + 1)) "the long conn was handed to XDP"
