# Checks shared by the forwarding-mode tests (test_nat, test_dr, test_tun): sourced after
# lib.sh, with the topology up, xvsd running a TCP service on $VIP:80 with weights 3:1 over
# rs1/rs2 and a UDP service on $VIP:$UDP_VPORT answered by both RS' echo.

# mode_check_http_split : 40 short connections, all answered, split 3:1 by wrr (+-5).
mode_check_http_split() {
    local out=$XE_TMP/split n1 n2
    http_loop 40 "$out"
    n1=$(count_lines rs1 "$out")
    n2=$(count_lines rs2 "$out")
    log "split: rs1 $n1, rs2 $n2, errors $(grep -c '^ERR' "$out")"
    assert_eq 40 $((n1 + n2)) "connections answered"
    assert_ge "$n1" 25 "rs1 (weight 3) share of 40"
    assert_le "$n1" 35 "rs1 (weight 3) share of 40"
}

# mode_check_client_address : both RS logged the client's own address and nothing else.
mode_check_client_address() {
    local i
    for i in 1 2; do
        assert_eq "$CLIENT_IP" "$(peers_of "$i" | tr '\n' ' ' | sed 's/ $//')" "peer addresses rs$i saw"
    done
}

# mode_check_download : a 20 MB download, byte-identical.
mode_check_download() {
    local want got
    want=$(sha256sum <"$XE_TMP/big.bin" | cut -d' ' -f1)
    in_ns "$NS_CL" curl -s --max-time 30 -H "Connection: close" -o "$XE_TMP/dl" "http://$VIP/big.bin"
    got=$(sha256sum <"$XE_TMP/dl" | cut -d' ' -f1)
    assert_eq "$want" "$got" "sha256 of a 20 MB download"
}

# mode_check_udp : 200 UDP exchanges over 10 client ports, >= 99% answered, both RS used.
mode_check_udp() {
    local res answered
    in_ns "$NS_CL" timeout 10 "$XE_PY" "$XE_LIB_DIR/udp_client.py" "$VIP" "$UDP_VPORT" 4 2 5 >/dev/null
    res=$(in_ns "$NS_CL" timeout 30 "$XE_PY" "$XE_LIB_DIR/udp_client.py" "$VIP" "$UDP_VPORT" 200 10 20) ||
        fail "udp client: $res"
    answered=$(awk '$1 == "sent" { print $4 }' <<<"$res")
    log "UDP: $(tr '\n' ' ' <<<"$res")"
    assert_ge "${answered:-0}" 198 "UDP datagrams answered of 200"
    assert_contains "$res" "rs1 " "UDP answers from rs1"
    assert_contains "$res" "rs2 " "UDP answers from rs2"
}
