#!/usr/bin/env bash
# IPv4 fragments through a UDP VIP, FNAT and NAT: xvs reassembles the client's fragments per
# worker (frag_defs), forwards the datagram by its mode and refragments it to the 1500-byte
# MTU on the way to the RS; the RS's fragmented answer comes back the same way.
#   - a whole 100-byte datagram is answered (baseline);
#   - af_xdp: a 100-byte datagram in two fragments, a 3000-byte one in three and a 4000-byte
#     one in three are answered in full (the echo adds 4 bytes); frag_reassembled counts the
#     datagrams both ways, frag_split the refragmented ones, and no drop_frag_* counter moves;
#   - af_packet: DPDK 22.11's PMD joins a PACKET_FANOUT group with PACKET_FANOUT_FLAG_DEFRAG,
#     so the lb kernel reassembles IPv4 fragments for the PMD's socket before xvs sees any
#     (kernel defaults: start_xvsd does not zero ipfrag_high_thresh, which would have the
#     kernel drop them all). With the default 2048-byte af_packet frame a reassembled 3000-byte
#     datagram does not fit and the PMD loses it (xvsd warns at startup, checked); with
#     framesz=8192 in the devargs xvs sizes the port's mbufs to the frame, receives the
#     reassembled datagram whole and fragments it to the 1500-byte MTU (frag_split), so the
#     3000- and 4000-byte datagrams are answered in full; frag_reassembled stays 0 (the
#     kernel's IpReasmOKs counts them instead).
source "$(dirname "$0")/lib.sh"
e2e_init "${1:-build}"
kernel_stat() { in_ns "$NS_LB" nstat -az "$1" | awk -v k="$1" '$1 == k { print $2 }'; }
send_dgram() { # SIZE FRAGSIZE -> bytes answered
    in_ns "$NS_CL" timeout 20 "$XE_PY" "$XE_LIB_DIR/frag_client.py" cl0 "$CLIENT_IP" "$VIP" 53 "$1" "$2" 1.5 |
        awk '{ print $4 }'
}
frag_drops() {
    local sum=0 c
    for c in drop_frag_timeout drop_frag_table_full drop_frag_no_buffer drop_frag_too_many \
        drop_frag_overlap drop_frag_bad_length drop_frag_too_big drop_frag_duplicate drop_ip_fragment; do
        sum=$((sum + $(counter "$c")))
    done
    echo "$sum"
}

topo_up 1
start_rs_udp 1
for kind in FNAT NAT; do
    conf=$XE_TMP/xvs-$kind.conf
    { config_head; vs_block UDP "$VIP" 53 "1:5353:1" rr "$kind"; } >"$conf"
    start_xvsd "$conf"
    for k in 1 2 3; do # warm-up: ARP for the RS
        [[ $(send_dgram 100 0) -gt 0 ]] && break
    done
    assert_eq 104 "$(send_dgram 100 0)" "$kind: a whole datagram is answered"
    merged_before=$(counter frag_reassembled)
    kernel_ok_before=$(kernel_stat IpReasmOKs)
    kernel_fail_before=$(kernel_stat IpReasmFails)
    assert_eq 104 "$(send_dgram 100 56)" "$kind: answer to a datagram in two fragments"
    if [[ ${XE_PMD:-af_xdp} == af_packet ]]; then
        assert_contains "$(cat "$XVSD_LOG")" "reassembles IP fragments" "$kind: xvsd warns that the kernel reassembles"
        assert_eq 0 "$(send_dgram 3000 1480)" "$kind: 3000 bytes in fragments (lost in the 2048-byte af_packet frame)"
        sleep 0.3
        assert_eq 0 "$(($(counter frag_reassembled) - merged_before))" "$kind: datagrams reassembled by xvs"
        assert_ge "$(($(kernel_stat IpReasmOKs) - kernel_ok_before))" 2 "$kind: datagrams reassembled by the lb kernel"
        stop_xvsd
        # Frames of 8192 bytes: the reassembled datagrams fit, and xvs fragments them.
        XE_AF_PACKET_ARGS=framecnt=1024,framesz=8192,blocksz=8192,qdisc_bypass=1
        { config_head; vs_block UDP "$VIP" 53 "1:5353:1" rr "$kind"; } >"$conf"
        unset XE_AF_PACKET_ARGS
        start_xvsd "$conf"
        for k in 1 2 3; do
            [[ $(send_dgram 100 0) -gt 0 ]] && break
        done
        assert_contains "$(cat "$XVSD_LOG")" "framesz 8192" "$kind: xvsd's warning names the frame size"
        split_before=$(counter frag_split)
        kernel_ok_before=$(kernel_stat IpReasmOKs)
        assert_eq 3004 "$(send_dgram 3000 1480)" "$kind: framesz 8192: answer to 3000 bytes in three fragments"
        assert_eq 4004 "$(send_dgram 4000 1480)" "$kind: framesz 8192: answer to 4000 bytes in three fragments"
        sleep 0.3
        assert_eq 0 "$(counter frag_reassembled)" "$kind: framesz 8192: datagrams reassembled by xvs"
        assert_ge "$(($(counter frag_split) - split_before))" 4 "$kind: framesz 8192: datagrams fragmented by xvs (2 each way)"
        assert_ge "$(($(kernel_stat IpReasmOKs) - kernel_ok_before))" 4 "$kind: framesz 8192: datagrams reassembled by the lb kernel"
        assert_eq 0 "$(frag_drops)" "$kind: framesz 8192: fragments dropped by xvs"
    else
        assert_eq 3004 "$(send_dgram 3000 1480)" "$kind: answer to 3000 bytes in three fragments"
        assert_eq 4004 "$(send_dgram 4000 1480)" "$kind: answer to 4000 bytes in three fragments"
        sleep 0.3
        merged=$(($(counter frag_reassembled) - merged_before))
        log "$kind: datagrams reassembled by xvs: $merged"
        # Each way: 3 client datagrams, and the RS's 3004- and 4004-byte answers (its kernel
        # fragments them for the 1500-byte link).
        assert_eq 5 "$merged" "$kind: frag_reassembled"
        assert_eq 0 "$(frag_drops)" "$kind: fragments dropped by xvs"
        assert_ge "$(counter frag_split)" 4 "$kind: datagrams refragmented (2 each way)"
        assert_eq 0 "$(($(kernel_stat IpReasmOKs) - kernel_ok_before))" "$kind: datagrams reassembled by the lb kernel"
    fi
    assert_eq 0 "$(($(kernel_stat IpReasmFails) - kernel_fail_before))" "$kind: fragments dropped by the lb kernel"
    assert_eq 104 "$(send_dgram 100 0)" "$kind: whole datagrams still answered"
    stop_xvsd
done
pass "fragmented datagrams are reassembled, forwarded and refragmented"
