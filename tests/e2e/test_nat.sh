#!/usr/bin/env bash
# NAT (masquerading) mode: VIP:80 -> RS:8080 (port forwarding) and UDP VIP:53 -> RS:5353. The
# real servers' default route is the director (10.10.2.1), so replies come back through it
# and are rewritten to come from the VIP. Each RS sees the client's own address.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/mode_checks.sh"
e2e_init "${1:-build}"
need_tools sha256sum

topo_up 2
start_rs_http 1
start_rs_http 2
start_rs_udp 1
start_rs_udp 2
UDP_VPORT=53
conf=$XE_TMP/xvs.conf
{
    config_head
    vs_block TCP "$VIP" 80 "1:8080:3 2:8080:1" wrr NAT
    vs_block UDP "$VIP" 53 "1:5353:1 2:5353:1" rr NAT
} >"$conf"
start_xvsd "$conf"

mode_check_http_split
mode_check_client_address
mode_check_download
mode_check_udp
list=$(xvsadm_ns -L -n)
echo "$list" >&2
assert_contains "$list" "$(printf -- '-> %-28s %-7s %-6s' "$(rs_ip 1):8080" Masq 3)" "xvsadm -L shows Masq"
assert_eq 0 "$(counter drop_not_local)" "drop_not_local (every reply matched its conn)"
