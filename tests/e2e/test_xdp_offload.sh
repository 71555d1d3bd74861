#!/usr/bin/env bash
# The XDP flow fast path (`netif_defs { xdp_offload N }`, lb/offload.h) on net_af_xdp ports:
#  - a 20 MB download and two 20 MB uploads through a FULLNAT VIP are byte-identical, the
#    conns are handed to the XDP program (xdp_offloaded) and taken back at their FIN
#    (xdp_taken_back), and most of their segments never reach xvs (lb_forwarded far below
#    the packets the service counted), yet the service's counters hold every byte;
#  - the same for a 20 MB download through NAT (TTL decremented by the program) and through
#    FNAT66 (IPv6 addresses and checksums), each handed over and taken back;
#  - a TOA service's conn is never handed over (its first segments carry the option);
#  - a conn whose traffic all goes by XDP outlives its idle timeout while it talks (the slots'
#    last-packet times move its deadline);
#  - with GRO turned off on the client-side peer (that veth then takes no XDP frames), a
#    FULLNAT download is not handed over (xdp_offload_no_xmit) and completes through xvs;
#  - DR (replies straight from the RS to the client): a 20 MB upload's inbound direction is
#    handed over, as it leaves by the RS-side port, which still takes XDP frames.
# The veth peers of the lb's ports get GRO on: a veth takes XDP redirects only with NAPI on
# its peer (a NIC driver takes them as they are).
# e2e: af_xdp
source "$(dirname "$0")/lib.sh"
e2e_init "${1:-build}"
need_tools sha256sum ethtool

V6_CL=2001:db8:1::2
VIP66=2001:db8:1::100
RS6=2001:db8:2::2
topo_up 1
ip -n "$NS_CL" addr add "$V6_CL/64" dev cl0 nodad
ip -n "$NS_CL" -6 route add default via 2001:db8:1::1
ip -n "$(ns_rs 1)" addr add "$RS6/64" dev rs0 nodad
ip -n "$(ns_rs 1)" -6 route add default via 2001:db8:2::1
# NAPI on the peers of lb-wan and lb-lan, so frames the XDP program redirects there are taken.
in_ns "$NS_CL" ethtool -K cl0 gro on >/dev/null
in_ns "$NS_SW" ethtool -K sw-lb gro on >/dev/null
rs_vip_by_hand 1 # for the DR service (VIP:82), last
XE_RS_LISTEN="$(rs_ip 1):8080 [$RS6]:8080 $VIP:82" start_rs_http 1
start_rs_echo 1 7000
conf=$XE_TMP/xvs.conf
{
    XE_NETIF_EXTRA="    xdp_offload 16" XE_IP_EXTRA="    address 2001:db8:1::1/64 dev wan0
    address 2001:db8:2::1/64 dev lan0" config_head
    vs_block TCP "$VIP" 80 "1:8080:1" rr
    vs_block TCP "$VIP" 7000 "1:7000:1" rr
    vs_block TCP "$VIP" 8080 "1:8080:1" rr NAT
    vs_block TCP "$VIP" 82 "1:82:1" rr DR
    cat <<EOF2
local_address_group lips6 {
    2001:db8:2::100-103 lan0
}
virtual_server $VIP66 80 {
    protocol TCP
    lb_algo rr
    lb_kind FNAT
    laddr_group_name lips6
    real_server $RS6 8080 { weight 1 }
}
virtual_server $VIP 81 {
    protocol TCP
    lb_algo rr
    lb_kind FNAT
    laddr_group_name lips
    toa on
    real_server $(rs_ip 1) 8080 { weight 1 }
}
EOF2
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

# download URL WHAT : one 20 MB download, its sha256 checked; OFFLOADED, TAKEN_BACK and
# FORWARDED: the counters' steps over it.
download() {
    local url=$1 what=$2 off0 back0 fwd0 k
    off0=$(counter xdp_offloaded) back0=$(counter xdp_taken_back) fwd0=$(counter lb_forwarded)
    in_ns "$NS_CL" curl -s --max-time 30 -g -H "Connection: close" -o "$XE_TMP/dl" "$url"
    assert_eq "$want" "$(sha256sum <"$XE_TMP/dl" | cut -d' ' -f1)" "sha256 of the 20 MB download ($what)"
    for ((k = 0; k < 30; k++)); do
        (($(counter xdp_taken_back) > back0)) && break
        sleep 0.1
    done
    OFFLOADED=$(($(counter xdp_offloaded) - off0))
    TAKEN_BACK=$(($(counter xdp_taken_back) - back0))
    FORWARDED=$(($(counter lb_forwarded) - fwd0))
    log "$what: handed over $OFFLOADED, taken back $TAKEN_BACK, forwarded by xvs $FORWARDED"
}
download "http://$VIP:8080/big.bin" NAT
assert_eq 1 "$OFFLOADED" "the NAT conn handed to XDP"
assert_eq 1 "$TAKEN_BACK" "the NAT conn taken back"
assert_le "$FORWARDED" 1000 "NAT packets xvs forwarded itself (of ~22,000)"
download "http://[$VIP66]/big.bin" FNAT66
assert_eq 1 "$OFFLOADED" "the FNAT66 conn handed to XDP"
assert_eq 1 "$TAKEN_BACK" "the FNAT66 conn taken back"
assert_le "$FORWARDED" 1000 "FNAT66 packets xvs forwarded itself (of ~22,000)"
download "http://$VIP:81/big.bin" "FULLNAT with TOA"
assert_eq 0 "$OFFLOADED" "a TOA conn stays in xvs"
assert_ge "$FORWARDED" 14000 "the TOA conn's packets all forwarded by xvs"

# Idle timeout with the traffic on XDP: established 3 s; the conn talks for 8 s (a line every
# 0.5 s, each echoed), so only the XDP slots show it alive.
xvsadm_ns --set 3 2 2 || fail "xvsadm --set"
before=$(counter xdp_offloaded)
in_ns "$NS_CL" timeout 30 "$XE_PY" "$XE_LIB_DIR/tcp_longconn.py" "$VIP" 7000 8 >"$XE_TMP/long.out" 2>&1
rc=$?
tail -n 2 "$XE_TMP/long.out" >&2
assert_eq 0 "$rc" "the long conn's every line echoed for 8 s (3 s idle timeout)"
assert_ge "$(counter xdp_offloaded)" $((before + 1)) "the long conn was handed to XDP"

# The client-side peer without NAPI: lb-wan takes no XDP frames, so the replies of a FULLNAT
# conn could not leave by XDP; the workers see it at their next poll (1 s) and keep such conns.
in_ns "$NS_CL" ethtool -K cl0 gro off >/dev/null
sleep 1.5
no_xmit0=$(counter xdp_offload_no_xmit)
download "http://$VIP/big.bin" "FULLNAT, client peer without GRO"
assert_eq 0 "$OFFLOADED" "no hand-over while lb-wan takes no XDP frames"
assert_ge "$(counter xdp_offload_no_xmit)" $((no_xmit0 + 1)) "the refusal counted (xdp_offload_no_xmit)"

# DR: only client -> RS passes the director, and it leaves by lb-lan (its peer still has GRO),
# so the upload's conn is handed over although lb-wan takes no XDP frames.
direct_return_up
off0=$(counter xdp_offloaded) back0=$(counter xdp_taken_back) fwd0=$(counter lb_forwarded)
up=$XE_TMP/upload.bin
reply=$(in_ns "$NS_CL" curl -s --max-time 30 -H "Connection: close" -H "Expect:" \
    --data-binary @"$up" "http://$VIP:82/upload")
assert_eq "$(sha256sum <"$up" | cut -d' ' -f1) $((20 * 1024 * 1024))" "$reply" "sha256 and length the RS received for a 20 MB DR upload"
for ((k = 0; k < 30; k++)); do
    (($(counter xdp_taken_back) > back0)) && break
    sleep 0.1
done
log "DR upload: handed over $(($(counter xdp_offloaded) - off0)), taken back $(($(counter xdp_taken_back) - back0)), forwarded by xvs $(($(counter lb_forwarded) - fwd0))"
assert_eq 1 $(($(counter xdp_offloaded) - off0)) "the DR conn handed to XDP"
assert_eq 1 $(($(counter xdp_taken_back) - back0)) "the DR conn taken back"
assert_le $(($(counter lb_forwarded) - fwd0)) 1000 "DR packets xvs forwarded itself (of ~14,500)"
