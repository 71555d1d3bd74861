#!/usr/bin/env bash
# Bulk data through a FULLNAT VIP: a 20 MB download and a 20 MB upload, both byte-identical
# (sha256 of the RS file vs what the client got; sha256 the RS computed of what it received).
source "$(dirname "$0")/lib.sh"
e2e_init "${1:-build}"
need_tools sha256sum

topo_up 2
start_rs_http 1
start_rs_http 2
conf=$XE_TMP/xvs.conf
{ config_head; vs_block TCP "$VIP" 80 "1:8080:1 2:8080:1" rr; } >"$conf"
start_xvsd "$conf"

want=$(sha256sum <"$XE_TMP/big.bin" | cut -d' ' -f1)
for k in 1 2; do # rr over two RS: both serve once
    t0=$(date +%s.%N)
    in_ns "$NS_CL" curl -s --max-time 30 -H "Connection: close" -o "$XE_TMP/dl" "http://$VIP/big.bin"
    rc=$?
    t1=$(date +%s.%N)
    got=$(sha256sum <"$XE_TMP/dl" | cut -d' ' -f1)
    log "download $k: curl exit $rc, $(stat -c %s "$XE_TMP/dl") bytes, $(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.2f s", b - a }')"
    if [[ $got != "$want" ]]; then
        # where frames died: the lb ports' kernel-side counters (XDP redirect failures show
        # as rx_queue_0_drops on veth)
        for dev in lb-wan lb-lan; do
            log "$dev: $(in_ns "$NS_LB" ethtool -S "$dev" 2>/dev/null | grep -E 'drops|xdp_redirect' | tr -s ' \n' ' ')"
        done
        xvsadm_ns -L -n --stats --exact >&2
    fi
    assert_eq "$want" "$got" "sha256 of 20 MB download $k"
done

check_uploads ""

stats=$(xvsadm_ns -L -n --stats --exact)
echo "$stats" >&2
in_bytes=$(awk -v k="$VIP:80" '$1 == "TCP" && $2 == k { print $6 }' <<<"$stats")
out_bytes=$(awk -v k="$VIP:80" '$1 == "TCP" && $2 == k { print $7 }' <<<"$stats")
assert_ge "${in_bytes:-0}" $((40 * 1024 * 1024)) "service InBytes (2 uploads)"
assert_ge "${out_bytes:-0}" $((40 * 1024 * 1024)) "service OutBytes (2 downloads)"

# Every frame xvs handed to a port left it: on net_af_xdp none was refused by the kernel as an
# invalid descriptor (frames outside the UMEM the PMD registers did, and wedged a port's
# transmit under load: port/eal.h, umem_pool_create). The column is 0 on other devices.
links=$(xvsctl_ns link show -s)
echo "$links" >&2
assert_eq 2 "$(grep -c 'TX:.*errors refused' <<<"$links")" "link show -s: a refused column for each port"
refused=$(awk '/TX:/ { getline; s += $4 } END { print s + 0 }' <<<"$links")
assert_eq 0 "$refused" "frames the kernel refused from xvs's AF_XDP sockets"
