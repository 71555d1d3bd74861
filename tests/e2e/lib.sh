# Helpers for the end-to-end tests: a namespace topology with a client, the director (xvsd)
# and real servers, servers on the RS, xvsd start/stop, assertions, and one cleanup trap.
# Invariant: everything a test creates (namespaces, processes, temp files) carries this run's
# unique prefix and is removed by `cleanup` on any exit; traffic goes only to our namespaces.
#
# Topology (names are "$XE-<role>"; interface names are per namespace):
#
#   [cl] cl0 10.10.1.2/24 ---- lb-wan [lb] lb-lan ---- sw-lb [sw: bridge br0] sw-rsN ---- rs0 [rsN]
#                                  xvsd owns both lb ports             RS N: 10.10.2.(N+1)/24
#
# The lb namespace's kernel has no address on lb-wan/lb-lan and ip_forward=0: xvsd (DPDK on
# the veth by name) is the only thing answering there.

set -uo pipefail

XE_LIB_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
XE_PY=/usr/bin/python3 # the interpreter with scapy; the default python3 may be another one

# Unique per run: namespaces, DPDK file prefix, temp dir, socket.
XE=${XE:-xe$$$(printf '%04x' $((RANDOM % 65536)))}
XE_TMP=$(mktemp -d "${TMPDIR:-/tmp}/$XE.XXXXXX")
XE_SOCK=$XE_TMP/xvs.sock
NS_CL=$XE-cl
NS_LB=$XE-lb
NS_SW=$XE-sw
XE_RS_COUNT=0
XE_PIDS=()
XE_NAMESPACES=()
XVSD_PID=""
XVSD_LOG=""
XVSD_RUNS=0
XE_FAILED=0
declare -A DIRECTOR_PID=() DIRECTOR_LOG=() # two-director tests (cluster_up), by index 1|2
DIRECTOR_RUNS=0

VIP=10.10.1.100
CLIENT_IP=10.10.1.2
rs_ip() { echo "10.10.2.$(($1 + 1))"; } # rs_ip 1 -> 10.10.2.2
ns_rs() { echo "$XE-rs$1"; }

log() { printf '[%s %s] %s\n' "$(date +%T)" "${XE_TEST:-e2e}" "$*" >&2; }

# ---- cleanup -----------------------------------------------------------------------------

# Kills every process this test started (by pid, then whatever is left inside our own
# namespaces), deletes the namespaces and the temp dir. Safe to call more than once.
cleanup() {
    local rc=$?
    trap - EXIT
    trap "" INT TERM  # a second signal must not cut the cleanup short (namespaces left)
    local pid ns
    for pid in "${XE_PIDS[@]}"; do kill -TERM "$pid" 2>/dev/null; done
    [[ -n $XVSD_PID ]] && kill -TERM "$XVSD_PID" 2>/dev/null
    for pid in "${DIRECTOR_PID[@]}"; do [[ -n $pid ]] && kill -TERM "$pid" 2>/dev/null; done
    sleep 0.3
    for ns in "${XE_NAMESPACES[@]}"; do
        for pid in $(ip netns pids "$ns" 2>/dev/null); do kill -KILL "$pid" 2>/dev/null; done
    done
    for pid in "${XE_PIDS[@]}"; do kill -KILL "$pid" 2>/dev/null; done
    [[ -n $XVSD_PID ]] && kill -KILL "$XVSD_PID" 2>/dev/null
    for pid in "${DIRECTOR_PID[@]}"; do [[ -n $pid ]] && kill -KILL "$pid" 2>/dev/null; done
    wait 2>/dev/null
    for ns in "${XE_NAMESPACES[@]}"; do ip netns del "$ns" 2>/dev/null; done
    if ((rc != 0 || XE_FAILED)) && [[ -n $XVSD_LOG && -s $XVSD_LOG ]]; then
        echo "---- xvsd log (last 40 lines of $XVSD_LOG) ----" >&2
        tail -n 40 "$XVSD_LOG" >&2
    fi
    local i
    if ((rc != 0 || XE_FAILED)); then
        for i in "${!DIRECTOR_LOG[@]}"; do
            [[ -s ${DIRECTOR_LOG[$i]} ]] || continue
            echo "---- director $i log (last 40 lines of ${DIRECTOR_LOG[$i]}) ----" >&2
            tail -n 40 "${DIRECTOR_LOG[$i]}" >&2
        done
    fi
    if [[ -n ${XE_KEEP:-} ]]; then
        echo "kept $XE_TMP" >&2
    else
        rm -rf "$XE_TMP"
    fi
    ((XE_FAILED && rc == 0)) && rc=1
    exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# ---- assertions --------------------------------------------------------------------------

fail() {
    XE_FAILED=1
    echo "FAIL: $*" >&2
    exit 1
}
pass() { echo "ok: $*" >&2; }

assert_eq() { # expected actual what
    [[ "$1" == "$2" ]] || fail "$3: expected '$1', got '$2'"
    pass "$3 = $2"
}
assert_ge() { # actual min what
    (($1 >= $2)) || fail "$3: expected >= $2, got $1"
    pass "$3 = $1 (>= $2)"
}
assert_le() { # actual max what
    (($1 <= $2)) || fail "$3: expected <= $2, got $1"
    pass "$3 = $1 (<= $2)"
}
assert_contains() { # haystack needle what
    grep -qF -- "$2" <<<"$1" || fail "$3: '$2' not found in:
$1"
    pass "$3"
}
assert_not_contains() { # haystack needle what
    ! grep -qF -- "$2" <<<"$1" || fail "$3: '$2' unexpectedly found in:
$1"
    pass "$3"
}
# assert_float_between VALUE LO HI what  (decimal strings)
assert_float_between() {
    awk -v v="$1" -v lo="$2" -v hi="$3" 'BEGIN { exit !(v >= lo && v <= hi) }' ||
        fail "$4: $1 not in [$2, $3]"
    pass "$4 = $1 (in [$2, $3])"
}

# ---- tools -------------------------------------------------------------------------------

# need_tools TOOL... : fails the test (with the list) if any is missing.
need_tools() {
    local missing=() t
    for t in "$@"; do command -v "$t" >/dev/null 2>&1 || missing+=("$t"); done
    ((${#missing[@]} == 0)) || fail "missing tools: ${missing[*]} (scripts/test.sh installs them)"
}

# Sets BUILD (absolute) from the first script argument and checks the binaries.
e2e_init() {
    XE_TEST=$(basename "${0%.sh}")
    BUILD=$(cd "${1:-build}" 2>/dev/null && pwd) || fail "build dir '${1:-build}' not found"
    [[ $(id -u) -eq 0 ]] || fail "needs root (network namespaces)"
    local b
    for b in xvsd xvsadm; do [[ -x $BUILD/$b ]] || fail "$BUILD/$b not built"; done
    need_tools ip ethtool curl socat nginx "$XE_PY"
    log "run id $XE, temp $XE_TMP"
}

in_ns() { # in_ns NS CMD...
    local ns=$1
    shift
    ip netns exec "$ns" "$@"
}

# Starts CMD in NS in the background, remembers its pid (ip netns exec execs CMD, so the pid
# is CMD's own). Output goes to LOGFILE.  bg_ns NS LOGFILE CMD...
bg_ns() {
    local ns=$1 out=$2
    shift 2
    ip netns exec "$ns" "$@" >"$out" 2>&1 &
    XE_PIDS+=($!)
    BG_PID=$!
}

# wait_until TIMEOUT_S CMD... : polls CMD every 0.1 s until it succeeds or time runs out.
wait_until() {
    local deadline=$((SECONDS + $1))
    shift
    while ((SECONDS < deadline)); do
        "$@" >/dev/null 2>&1 && return 0
        sleep 0.1
    done
    "$@" >/dev/null 2>&1
}

# ---- topology ----------------------------------------------------------------------------

add_ns() {
    ip netns add "$1" || fail "ip netns add $1"
    XE_NAMESPACES+=("$1")
    ip -n "$1" link set lo up
}

no_offloads() { # NS IF
    ip netns exec "$1" ethtool -K "$2" tx off tso off gso off gro off >/dev/null 2>&1 ||
        ip netns exec "$1" ethtool -K "$2" tx off >/dev/null
}

# topo_up [RS_COUNT=2]: client, lb, switch and RS namespaces as drawn at the top.
topo_up() {
    local n=${1:-2} i ns
    XE_RS_COUNT=$n
    add_ns "$NS_CL"
    add_ns "$NS_LB"
    add_ns "$NS_SW"
    ip link add cl0 netns "$NS_CL" type veth peer name lb-wan netns "$NS_LB" || fail "veth wan"
    ip link add lb-lan netns "$NS_LB" type veth peer name sw-lb netns "$NS_SW" || fail "veth lan"
    ip -n "$NS_SW" link add br0 type bridge
    ip -n "$NS_SW" link set br0 up
    ip -n "$NS_SW" link set sw-lb master br0 up
    no_offloads "$NS_SW" sw-lb
    for ((i = 1; i <= n; i++)); do
        ns=$(ns_rs "$i")
        add_ns "$ns"
        ip link add rs0 netns "$ns" type veth peer name "sw-rs$i" netns "$NS_SW" || fail "veth rs$i"
        ip -n "$NS_SW" link set "sw-rs$i" master br0 up
        no_offloads "$NS_SW" "sw-rs$i"
        ip -n "$ns" addr add "$(rs_ip "$i")/24" dev rs0
        ip -n "$ns" link set rs0 up
        ip -n "$ns" route add default via 10.10.2.1
        no_offloads "$ns" rs0
    done
    ip -n "$NS_CL" addr add "$CLIENT_IP/24" dev cl0
    ip -n "$NS_CL" link set cl0 up
    ip -n "$NS_CL" route add default via 10.10.1.1
    no_offloads "$NS_CL" cl0
    # Short connections from one client: reuse ports quickly (bench and loops). Scripted
    # (scapy) clients send from fixed source ports in 30000-49999, which the kernel must not
    # also hand to curl: reserved, they are never ephemeral (a curl conn on 42010 was once
    # taken for a scripted one in test_proxy_protocol).
    in_ns "$NS_CL" sysctl -qw net.ipv4.ip_local_port_range="10000 65000" net.ipv4.tcp_tw_reuse=1 \
        net.ipv4.ip_local_reserved_ports=30000-49999
    ip -n "$NS_LB" link set lb-wan up
    ip -n "$NS_LB" link set lb-lan up
    in_ns "$NS_LB" sysctl -qw net.ipv4.ip_forward=0
    # The lb kernel must not answer for anything (it has no addresses anyway).
    in_ns "$NS_LB" sysctl -qw net.ipv6.conf.all.disable_ipv6=1 2>/dev/null
    log "topology up: $NS_CL $NS_LB $NS_SW + $n RS"
}

# direct_return_up : DR/TUN return path that bypasses the director. The client gets a second
# leg on the RS LAN (cl-lan 10.10.2.50/24, rp_filter off, so it accepts the VIP's replies
# there) and every RS routes the client subnet through it. The RS side (VIP on lo, ARP
# sysctls) is the test's: by hand for DR, with `xvs-rs sysctl` for TUN.
direct_return_up() {
    local i ns
    ip link add cl-lan netns "$NS_CL" type veth peer name sw-cl netns "$NS_SW" || fail "veth cl-lan"
    ip -n "$NS_SW" link set sw-cl master br0 up
    no_offloads "$NS_SW" sw-cl
    ip -n "$NS_CL" addr add 10.10.2.50/24 dev cl-lan
    ip -n "$NS_CL" link set cl-lan up
    no_offloads "$NS_CL" cl-lan
    in_ns "$NS_CL" sysctl -qw net.ipv4.conf.all.rp_filter=0 net.ipv4.conf.cl-lan.rp_filter=0 \
        net.ipv4.conf.cl0.rp_filter=0
    for ((i = 1; i <= XE_RS_COUNT; i++)); do
        ns=$(ns_rs "$i")
        ip -n "$ns" route add 10.10.1.0/24 via 10.10.2.50 dev rs0 || fail "rs$i route to clients"
    done
}

# rs_vip_by_hand I : VIP on RS I's lo with the DR sysctls (arp_ignore=1, arp_announce=2,
# rp_filter=0), as an operator does it without xvs-rs.
rs_vip_by_hand() {
    local ns
    ns=$(ns_rs "$1")
    ip -n "$ns" addr add "$VIP/32" dev lo
    in_ns "$ns" sysctl -qw net.ipv4.conf.all.arp_ignore=1 net.ipv4.conf.all.arp_announce=2 \
        net.ipv4.conf.rs0.arp_ignore=1 net.ipv4.conf.rs0.arp_announce=2 \
        net.ipv4.conf.all.rp_filter=0 net.ipv4.conf.rs0.rp_filter=0 net.ipv4.conf.lo.rp_filter=0
}

# peers_of I : the distinct peer addresses RS I's nginx logged, one per line.
peers_of() { sort -u "$XE_TMP/rs$1/access.log" 2>/dev/null; }

topo_down() {
    local ns
    for ns in "${XE_NAMESPACES[@]}"; do ip netns del "$ns" 2>/dev/null; done
    XE_NAMESPACES=()
}

# With net_af_packet the lb kernel still sees every frame: drop it at netdev ingress there
# (AF_PACKET taps before the ingress hook, so xvsd still gets the frames).
lb_kernel_drop() { # [NS=$NS_LB]
    in_ns "${1:-$NS_LB}" nft -f - <<'EOF'
table netdev xe_drop {
    chain wan { type filter hook ingress device "lb-wan" priority 0; policy drop; }
    chain lan { type filter hook ingress device "lb-lan" priority 0; policy drop; }
}
EOF
}
lb_kernel_drop_off() { in_ns "$NS_LB" nft delete table netdev xe_drop 2>/dev/null; }

# ---- servers on the RS -------------------------------------------------------------------

# start_rs_http I : nginx on RS I :8080 (XE_RS_LISTEN overrides: "$VIP:80" for DR/TUN, where
# the RS serves the VIP itself) answering "rsI\n" on /, a 20 MB random file on
# /big.bin ($XE_TMP/big.bin, the same for every RS), and /upload proxied to a loopback Python
# server that replies "<sha256> <length>" of the body it received.
start_rs_http() {
    local i=$1 ns dir listen
    ns=$(ns_rs "$i")
    dir=$XE_TMP/rs$i
    listen=${XE_RS_LISTEN:-$(rs_ip "$i"):8080}
    local first=${listen%% *} l listens=""
    for l in $listen; do listens+="        listen $l backlog=4096;"$'\n'; done
    mkdir -p "$dir"/tmp
    # One random file shared by every RS, so a download compares with it whoever served it.
    [[ -f $XE_TMP/big.bin ]] || head -c $((20 * 1024 * 1024)) /dev/urandom >"$XE_TMP/big.bin"
    cat >"$dir/nginx.conf" <<EOF
daemon off;
master_process off;
worker_processes 1;
pid $dir/nginx.pid;
error_log $dir/error.log warn;
events { worker_connections 4096; }
http {
    # The peer address of every request ($dir/access.log): NAT/DR/TUN tests check that the RS
    # sees the client's own address.
    log_format peer '\$remote_addr';
    access_log $dir/access.log peer;
    client_body_temp_path $dir/tmp/body;
    proxy_temp_path $dir/tmp/proxy;
    fastcgi_temp_path $dir/tmp/fastcgi;
    uwsgi_temp_path $dir/tmp/uwsgi;
    scgi_temp_path $dir/tmp/scgi;
    keepalive_requests 100000;
    server {
$listens        location = / { default_type text/plain; return 200 "rs$i\n"; }
        location = /big.bin { alias $XE_TMP/big.bin; }
        location = /upload {
            client_max_body_size 64m;
            proxy_request_buffering off;
            proxy_pass http://127.0.0.1:8081;
        }
    }
}
EOF
    bg_ns "$ns" "$dir/nginx.out" nginx -c "$dir/nginx.conf"
    bg_ns "$ns" "$dir/upload.out" "$XE_PY" "$XE_LIB_DIR/upload_server.py" 127.0.0.1 8081
    wait_until 10 in_ns "$ns" curl -s --max-time 1 -o /dev/null "http://$first/" ||
        fail "nginx on rs$i did not start: $(cat "$dir/nginx.out" "$dir/error.log" 2>/dev/null)"
    # Forget the readiness probe: the log holds client requests only. nginx logs a request
    # after answering it, so wait for the probe's line first (truncating before it was written
    # once left the probe's own address in a test's peer list).
    wait_until 2 test -s "$dir/access.log"
    : >"$dir/access.log"
}

# start_rs_udp I [ADDR=RS address] : UDP echo on RS I ADDR:5353 that prefixes each reply with "rsI " (so a test can
# tell which RS answered).
start_rs_udp() {
    local i=$1
    bg_ns "$(ns_rs "$i")" "$XE_TMP/udp$i.out" \
        "$XE_PY" "$XE_LIB_DIR/udp_echo.py" "${2:-$(rs_ip "$i")}" 5353 "rs$i "
}

# start_rs_echo I [PORT=7000] : TCP line echo (socat) for long-lived connections.
start_rs_echo() {
    local i=$1 port=${2:-7000}
    bg_ns "$(ns_rs "$i")" "$XE_TMP/echo$i.out" \
        socat "TCP4-LISTEN:$port,bind=$(rs_ip "$i"),reuseaddr,fork" PIPE
}

# ---- xvsd --------------------------------------------------------------------------------

xvsadm_ns() { XVS_SOCKET=$XE_SOCK "$BUILD/xvsadm" "$@"; }
xvsctl_ns() { XVS_SOCKET=$XE_SOCK "$BUILD/xvsctl" "$@"; }
# counter NAME : the value of one `xvsctl stats -a` counter now (tests that read several from
# one snapshot define their own counter() over a saved copy).
counter() {
    xvsctl_ns stats -a | awk -v k="$1" '{ for (i = 1; i < NF; i++) if ($i == k || $i == k ":") { print $(i + 1); exit } }'
}

# config_head : prints the base config (global, netif, worker, ip, laddrs); tests append
# their virtual_server blocks. net_af_xdp by default; XE_PMD=af_packet selects net_af_packet
# (start_xvsd then adds the nft netdev ingress drop so the lb kernel stays out).
# XE_LIPS overrides the local address range (FULLNAT source addresses toward the RS);
# XE_IP_EXTRA adds lines to ip_defs (routes), XE_NETIF_EXTRA to netif_defs. XE_WORKERS=N
# runs N workers (af_packet ports then get qpairs=N, one queue pair per worker); XE_CPUS adds
# `cpus LIST`.
config_head() {
    local pmd=${XE_PMD:-af_xdp} wan lan workers=${XE_WORKERS:-1}
    if [[ $pmd == af_packet ]]; then
        # XE_AF_PACKET_ARGS: the PMD's ring layout (test_fragments.sh raises framesz so
        # that the kernel's reassembled datagrams fit a frame).
        local args=${XE_AF_PACKET_ARGS:-framecnt=4096,qdisc_bypass=1}
        ((workers > 1)) && args+=",qpairs=$workers"
        wan="net_af_packet0,iface=lb-wan,$args"
        lan="net_af_packet1,iface=lb-lan,$args"
    else
        # XE_AF_XDP_ARGS: more devargs for both ports (bench/e2e tries PMD settings).
        wan="net_af_xdp0,iface=lb-wan${XE_AF_XDP_ARGS:+,$XE_AF_XDP_ARGS}"
        lan="net_af_xdp1,iface=lb-lan${XE_AF_XDP_ARGS:+,$XE_AF_XDP_ARGS}"
    fi
    cat <<EOF
global_defs {
    log_level info
    control_socket $XE_SOCK
}
netif_defs {
    eal_args "--no-huge -m 512 --no-pci --no-shconf --file-prefix $XE -l 0"
    port wan0 { dev $wan }
    port lan0 { dev $lan }
${XE_NETIF_EXTRA:-}
}
worker_defs { workers $workers${XE_CPUS:+ cpus $XE_CPUS}${XE_POLL:+ poll_mode $XE_POLL} }
ip_defs {
    address 10.10.1.1/24 dev wan0
    address 10.10.2.1/24 dev lan0
${XE_IP_EXTRA:-}
}
local_address_group lips {
    ${XE_LIPS:-10.10.2.100-10.10.2.103} lan0
}
EOF
}

# vs_block PROTO VIP PORT "RS_I:PORT:WEIGHT ..." [SCHED=wrr] [LB_KIND=FNAT (e.g. "TUN type
# gue port 6080")]; local addresses only for FNAT.
vs_block() {
    local proto=$1 vip=$2 port=$3 rss=$4 sched=${5:-wrr} kind=${6:-FNAT} r i p w
    echo "virtual_server $vip $port {"
    echo "    protocol $proto"
    echo "    lb_algo $sched"
    echo "    lb_kind $kind"
    [[ $kind == FNAT ]] && echo "    laddr_group_name lips"
    for r in $rss; do
        IFS=: read -r i p w <<<"$r"
        echo "    real_server $(rs_ip "$i") $p { weight $w }"
    done
    echo "}"
}

# start_xvsd CONFIG : xvsd in the lb namespace, in the background; waits (30 s max) until
# the control socket answers `xvsadm -L -n`. XVSD_BIN runs another xvsd than the build's (a
# command that ends by exec-ing it, so XVSD_PID is xvsd's: test_package.sh's chroot).
start_xvsd() {
    local conf=$1 bin=${XVSD_BIN:-$BUILD/xvsd}
    XVSD_RUNS=$((XVSD_RUNS + 1))
    if [[ ${XE_PMD:-af_xdp} == af_packet ]] && ! in_ns "$NS_LB" nft list table netdev xe_drop >/dev/null 2>&1; then
        lb_kernel_drop || fail "nft netdev drop for af_packet"
    fi
    # af_packet: the PMD's PACKET_FANOUT group has the kernel reassemble IP fragments before
    # xvs sees them (test_fragments.sh); its default limits are kept, so small fragmented
    # datagrams still get through there (zero limits would have the kernel drop them all).
    XVSD_LOG=$XE_TMP/xvsd.$XVSD_RUNS.log
    in_ns "$NS_LB" "$bin" -t -f "$conf" >"$XVSD_LOG" 2>&1 ||
        fail "xvsd -t -f $conf refused the config: $(cat "$XVSD_LOG")"
    ip netns exec "$NS_LB" "$bin" -f "$conf" >>"$XVSD_LOG" 2>&1 &
    XVSD_PID=$!
    local deadline=$((SECONDS + 30))
    while ! xvsadm_ns -L -n >/dev/null 2>&1; do
        kill -0 "$XVSD_PID" 2>/dev/null || {
            wait "$XVSD_PID"
            fail "xvsd exited early (status $?); log: $(tail -n 30 "$XVSD_LOG")"
        }
        ((SECONDS < deadline)) || fail "xvsd socket $XE_SOCK not answering after 30 s"
        sleep 0.2
    done
    log "xvsd up (pid $XVSD_PID, log $XVSD_LOG)"
}

# xvsd_halt PID SIGNAL WHAT : signals that xvsd and waits (10 s max); fails if it does not
# exit. Sets HALT_STATUS to its exit status.
xvsd_halt() {
    local pid=$1 sig=$2 what=$3 i
    kill -"$sig" "$pid" 2>/dev/null
    for ((i = 0; i < 100; i++)); do
        kill -0 "$pid" 2>/dev/null || break
        sleep 0.1
    done
    if kill -0 "$pid" 2>/dev/null; then
        kill -KILL "$pid"
        wait "$pid" 2>/dev/null
        fail "$what did not exit within 10 s of SIG$sig"
    fi
    wait "$pid"
    HALT_STATUS=$?
    log "$what stopped by SIG$sig (status $HALT_STATUS)"
}

# stop_xvsd [SIGNAL=TERM] : signals xvsd and waits (10 s max); fails if it does not exit.
# Sets XVSD_STATUS to its exit status.
stop_xvsd() {
    [[ -n $XVSD_PID ]] || return 0
    local pid=$XVSD_PID
    XVSD_PID=""
    xvsd_halt "$pid" "${1:-TERM}" xvsd
    XVSD_STATUS=$HALT_STATUS
}

# ---- client traffic ----------------------------------------------------------------------

# http_get URL : one short-lived request from the client namespace; prints the body.
http_get() { in_ns "$NS_CL" curl -s --max-time 2 -H "Connection: close" "$@"; }

# http_loop COUNT OUTFILE [URL] [LIMIT_S=120] : COUNT sequential short connections from the
# client namespace, one line per request written as it completes: the body ("rs1") or
# "ERR<curl exit code>". Bounded by COUNT and by LIMIT_S seconds overall.
http_loop() {
    local count=$1 out=$2 url=${3:-http://$VIP/} limit=${4:-120}
    # shellcheck disable=SC2016
    in_ns "$NS_CL" timeout "$limit" bash -c '
        for ((k = 0; k < $1; k++)); do
            body=$(curl -s --max-time 2 -H "Connection: close" "$2"); rc=$?
            if ((rc == 0)) && [[ -n $body ]]; then echo "$body"; else echo "ERR$rc"; fi
        done' _ "$count" "$url" >"$out"
}

# unexpected_failures FILE RANGE... : the failed requests (ERR lines, as "LINE:ERRrc") of an
# http_loop output, less at most one timeout (ERR28) in each RANGE ("FIRST-LAST" line numbers):
# the request in flight when a real server was removed. IPVS drops the client packets of a
# conn whose dest was removed, so that one request may time out; any other failure is listed.
unexpected_failures() {
    local file=$1
    shift
    awk -v ranges="$*" '
        BEGIN { n = split(ranges, r, " "); for (i = 1; i <= n; i++) { split(r[i], b, "-"); lo[i] = b[1]; hi[i] = b[2] } }
        /^ERR/ {
            for (i = 1; i <= n; i++)
                if ($0 == "ERR28" && NR >= lo[i] && NR <= hi[i] && !used[i]) { used[i] = 1; next }
            printf "%d:%s ", NR, $0
        }' "$file"
}

count_lines() { grep -c -x -- "$1" "$2" 2>/dev/null || true; } # count_lines LINE FILE

# check_uploads WHAT : two 20 MB uploads of random bytes to the RS's /upload (VIP:80); the
# RS answers the sha256 and the length it received, which must be the sent file's.
check_uploads() {
    local what=$1 up=$XE_TMP/upload.bin want_up reply k
    head -c $((20 * 1024 * 1024)) /dev/urandom >"$up"
    want_up="$(sha256sum <"$up" | cut -d' ' -f1) $((20 * 1024 * 1024))"
    for k in 1 2; do
        reply=$(in_ns "$NS_CL" curl -s --max-time 30 -H "Connection: close" -H "Expect:" \
            --data-binary @"$up" "http://$VIP/upload")
        assert_eq "$want_up" "$reply" "sha256 and length the RS received for 20 MB upload $k$what"
    done
}

# check_toa_at_rs1 VPORT WHAT : 20 curl requests to VIP:VPORT (a service whose only RS is rs1
# on 8080, answering "rs1"), captured at rs1; toa_check.py then asserts the TOA option
# (client address and port) on the right packets of every one of those connections.
check_toa_at_rs1() {
    local vport=$1 what=$2 pcap=$XE_TMP/toa$1.pcap ports=$XE_TMP/toa_ports$1 cap k r check rc
    timeout 30 ip netns exec "$(ns_rs 1)" tcpdump -i rs0 -n -U --immediate-mode -s 256 -c 2000 \
        -w "$pcap" "tcp port 8080" 2>"$XE_TMP/toa_tcpdump$vport.err" &
    cap=$!
    XE_PIDS+=("$cap")
    wait_until 10 grep -q "listening on" "$XE_TMP/toa_tcpdump$vport.err" || fail "tcpdump did not start"
    : >"$ports"
    for ((k = 0; k < 20; k++)); do
        r=$(in_ns "$NS_CL" curl -s --max-time 2 -H "Connection: close" -w ' %{local_port}' \
            "http://$VIP:$vport/") || true
        [[ $r =~ ^rs1$'\n'\ ([0-9]+)$ ]] && echo "${BASH_REMATCH[1]}" >>"$ports"
    done
    assert_eq 20 "$(wc -l <"$ports")" "curl requests through the $what VIP"
    sleep 0.5
    kill -INT "$cap" 2>/dev/null
    wait "$cap" 2>/dev/null
    check=$("$XE_PY" "$XE_LIB_DIR/toa_check.py" "$pcap" "$(rs_ip 1)" 8080 "$CLIENT_IP" "$ports" \
        192.0.2.77 2>&1)
    rc=$?
    echo "$check" >&2
    assert_eq 0 "$rc" "toa_check.py on the RS capture ($what)"
}

# ---- kernel peers (bench) ----------------------------------------------------------------

# lb_kernel_on : gives the lb kernel the director's addresses and forwarding (for the nftables
# and HAProxy peers; xvsd must be stopped). lb_kernel_off undoes it.
lb_kernel_on() {
    ip -n "$NS_LB" addr add 10.10.1.1/24 dev lb-wan
    ip -n "$NS_LB" addr add "$VIP/32" dev lb-wan # answers ARP for the VIP; DNAT acts first
    ip -n "$NS_LB" addr add 10.10.2.1/24 dev lb-lan
    in_ns "$NS_LB" sysctl -qw net.ipv4.ip_forward=1
}
lb_kernel_off() {
    in_ns "$NS_LB" sysctl -qw net.ipv4.ip_forward=0
    ip -n "$NS_LB" addr flush dev lb-wan
    ip -n "$NS_LB" addr flush dev lb-lan
    ip -n "$NS_CL" neigh flush dev cl0
    local i
    for ((i = 1; i <= XE_RS_COUNT; i++)); do ip -n "$(ns_rs "$i")" neigh flush dev rs0; done
}

# ---- two directors (cluster tests) -------------------------------------------------------
#
#   [cl] cl0 ---- sw-cl [swan: bridge br0] sw-lbI ---- lb-wan [lbI] lb-lan ---- sw-lbI [sw: br0] ---- RS
#
# Director I (1|2) in namespace $XE-lbI: xvs owns 10.10.1.1I/24 on wan0 and 10.10.2.1I/24 on
# lan0; its local addresses do not overlap the other's (1: 10.10.2.100-101, 2: .102-103).
# Without `router` the client cl0 10.10.1.2/24 is on the WAN bridge and reaches the VIP
# (10.10.1.100) on-link: whoever answers ARP for it gets the traffic (active/backup). With
# `router`, $XE-rt sits between: rt-wan 10.10.1.254/24 on the WAN bridge, rt-cl 10.10.9.1/24
# toward the client (cl0 10.10.9.2/24 plus 10.10.9.10-59, default via 10.10.9.1), forwarding
# with an L4 multipath hash so ECMP routes spread flows. The RS have no default route (FULLNAT).
NS_SWAN=$XE-swan
NS_RT=$XE-rt
CLUSTER_CLIENTS=() # with router: the client's extra addresses (ECMP spread tests)
CLUSTER_ROUTER=""  # set by `cluster_up N router`: directors route to clients via 10.10.1.254

director_ns() { echo "$XE-lb$1"; }
director_sock() { echo "$XE_TMP/xvs$1.sock"; }
director_log() { echo "${DIRECTOR_LOG[$1]:-}"; }
xvsadm_d() { # xvsadm_d I ARGS...
    local i=$1
    shift
    XVS_SOCKET=$(director_sock "$i") "$BUILD/xvsadm" "$@"
}
xvsctl_d() { # xvsctl_d I ARGS...
    local i=$1
    shift
    XVS_SOCKET=$(director_sock "$i") "$BUILD/xvsctl" "$@"
}
counter_d() { # counter_d I NAME : one `xvsctl stats -a` counter of director I
    xvsctl_d "$1" stats -a | awk -v k="$2" '{ for (i = 1; i < NF; i++) if ($i == k || $i == k ":") { print $(i + 1); exit } }'
}
# hold_conn ADDR:PORT SECONDS : an idle TCP conn from the client's ADDR:PORT to $VIP:80, held
# open SECONDS (sends nothing). The witness of a resync: a download's conn leaves ESTABLISHED
# once the server has sent its last byte and FIN, seconds before curl has read it all.
hold_conn() {
    local from=$1 secs=$2
    bg_ns "$NS_CL" "$XE_TMP/held-${from//[.:]/_}.out" timeout $((secs + 5)) bash -c \
        "sleep $secs | socat -u - TCP:$VIP:80,bind=${from%:*},sourceport=${from#*:},reuseaddr"
}
conn_live_d() { # conn_live_d I ADDR:PORT : director I lists that client's conn ESTABLISHED
    XVS_SOCKET=$(director_sock "$1") "$BUILD/xvsadm" -L -n -c | grep -qE "ESTABLISHED +${2//./\\.} "
}
sync_dump_d() { # sync_dump_d I : director I's sync state and conns, for a failure message
    echo "== director $1: $(xvsctl_d "$1" sync 2>&1)"
    xvsadm_d "$1" -L -n -c 2>&1 | head -n 30
    echo "counters: sync_imported $(counter_d "$1" sync_imported) sync_import_failed $(counter_d "$1" sync_import_failed)"
}

# cluster_up [RS_COUNT=2] [router]
cluster_up() {
    local n=${1:-2} with_router=${2:-} i ns d
    XE_RS_COUNT=$n
    add_ns "$NS_CL"
    add_ns "$NS_SWAN"
    add_ns "$NS_SW"
    for ns in "$NS_SWAN" "$NS_SW"; do
        ip -n "$ns" link add br0 type bridge
        ip -n "$ns" link set br0 up
    done
    for d in 1 2; do
        ns=$(director_ns "$d")
        add_ns "$ns"
        ip link add lb-wan netns "$ns" type veth peer name "sw-lb$d" netns "$NS_SWAN" || fail "veth wan$d"
        ip link add lb-lan netns "$ns" type veth peer name "sw-lb$d" netns "$NS_SW" || fail "veth lan$d"
        ip -n "$NS_SWAN" link set "sw-lb$d" master br0 up
        ip -n "$NS_SW" link set "sw-lb$d" master br0 up
        no_offloads "$NS_SWAN" "sw-lb$d"
        no_offloads "$NS_SW" "sw-lb$d"
        ip -n "$ns" link set lb-wan up
        ip -n "$ns" link set lb-lan up
        in_ns "$ns" sysctl -qw net.ipv4.ip_forward=0
        in_ns "$ns" sysctl -qw net.ipv6.conf.all.disable_ipv6=1 2>/dev/null
    done
    for ((i = 1; i <= n; i++)); do
        ns=$(ns_rs "$i")
        add_ns "$ns"
        ip link add rs0 netns "$ns" type veth peer name "sw-rs$i" netns "$NS_SW" || fail "veth rs$i"
        ip -n "$NS_SW" link set "sw-rs$i" master br0 up
        no_offloads "$NS_SW" "sw-rs$i"
        ip -n "$ns" addr add "$(rs_ip "$i")/24" dev rs0
        ip -n "$ns" link set rs0 up
        no_offloads "$ns" rs0
    done
    if [[ $with_router == router ]]; then
        add_ns "$NS_RT"
        CLUSTER_ROUTER=1
        ip link add rt-wan netns "$NS_RT" type veth peer name sw-rt netns "$NS_SWAN" || fail "veth rt-wan"
        ip link add cl0 netns "$NS_CL" type veth peer name rt-cl netns "$NS_RT" || fail "veth rt-cl"
        ip -n "$NS_SWAN" link set sw-rt master br0 up
        no_offloads "$NS_SWAN" sw-rt
        ip -n "$NS_RT" addr add 10.10.1.254/24 dev rt-wan
        ip -n "$NS_RT" addr add 10.10.9.1/24 dev rt-cl
        ip -n "$NS_RT" link set rt-wan up
        ip -n "$NS_RT" link set rt-cl up
        no_offloads "$NS_RT" rt-wan
        no_offloads "$NS_RT" rt-cl
        in_ns "$NS_RT" sysctl -qw net.ipv4.ip_forward=1 net.ipv4.fib_multipath_hash_policy=1
        ip -n "$NS_CL" addr add 10.10.9.2/24 dev cl0
        CLUSTER_CLIENTS=()
        for ((i = 10; i < 60; i++)); do
            ip -n "$NS_CL" addr add "10.10.9.$i/24" dev cl0
            CLUSTER_CLIENTS+=("10.10.9.$i")
        done
        ip -n "$NS_CL" link set cl0 up
        ip -n "$NS_CL" route add default via 10.10.9.1
    else
        ip link add cl0 netns "$NS_CL" type veth peer name sw-cl netns "$NS_SWAN" || fail "veth cl"
        ip -n "$NS_SWAN" link set sw-cl master br0 up
        no_offloads "$NS_SWAN" sw-cl
        ip -n "$NS_CL" addr add "$CLIENT_IP/24" dev cl0
        ip -n "$NS_CL" link set cl0 up
    fi
    no_offloads "$NS_CL" cl0
    in_ns "$NS_CL" sysctl -qw net.ipv4.ip_local_port_range="10000 65000" net.ipv4.tcp_tw_reuse=1 \
        net.ipv4.ip_local_reserved_ports=30000-49999
    log "cluster up: $NS_CL ${with_router:+$NS_RT }$NS_SWAN $(director_ns 1) $(director_ns 2) $NS_SW + $n RS"
}

# config_head_d I : the base config of director I (as config_head: XE_PMD, XE_WORKERS,
# XE_IP_EXTRA), with its own socket, DPDK file prefix, addresses and local addresses (and a
# default route via the router when there is one). With
# net_af_packet each port gets an exception TAP (xe-wan, xe-lan) so the director's kernel
# reaches the links; net_af_xdp passes the kernel's frames by its XDP program.
config_head_d() {
    local d=$1 pmd=${XE_PMD:-af_xdp} wan lan workers=${XE_WORKERS:-1} lips
    if [[ $pmd == af_packet ]]; then
        local args=${XE_AF_PACKET_ARGS:-framecnt=4096,qdisc_bypass=1}
        ((workers > 1)) && args+=",qpairs=$workers"
        wan="net_af_packet0,iface=lb-wan,$args exception tap xe-wan"
        lan="net_af_packet1,iface=lb-lan,$args exception tap xe-lan"
    else
        wan="net_af_xdp0,iface=lb-wan"
        lan="net_af_xdp1,iface=lb-lan"
    fi
    if ((d == 1)); then lips=10.10.2.100-10.10.2.101; else lips=10.10.2.102-10.10.2.103; fi
    cat <<EOF
global_defs {
    log_level info
    control_socket $(director_sock "$d")
}
netif_defs {
    eal_args "--no-huge -m 512 --no-pci --no-shconf --file-prefix $XE-d$d -l 0"
    port wan0 { dev $wan }
    port lan0 { dev $lan }
${XE_NETIF_EXTRA:-}
}
worker_defs { workers $workers${XE_CPUS:+ cpus $XE_CPUS}${XE_POLL:+ poll_mode $XE_POLL} }
ip_defs {
    address 10.10.1.1$d/24 dev wan0
    address 10.10.2.1$d/24 dev lan0
${CLUSTER_ROUTER:+    route default via 10.10.1.254 dev wan0}
${XE_IP_EXTRA:-}
}
local_address_group lips {
    $lips lan0
}
EOF
}

# director_kernel_up I : the director's kernel addresses (10.10.1.2I/24 toward the WAN,
# 10.10.2.2I/24 on the RS LAN) on the exception path's interfaces (the TAPs on net_af_packet,
# the veths themselves on net_af_xdp); xvsd must be running (it creates the TAPs).
director_kernel_up() {
    local d=$1 ns wan_if=lb-wan lan_if=lb-lan
    ns=$(director_ns "$d")
    if [[ ${XE_PMD:-af_xdp} == af_packet ]]; then
        wan_if=xe-wan
        lan_if=xe-lan
    fi
    ip -n "$ns" addr add "10.10.1.2$d/24" dev "$wan_if" || fail "director $d kernel address on $wan_if"
    ip -n "$ns" addr add "10.10.2.2$d/24" dev "$lan_if" || fail "director $d kernel address on $lan_if"
    ip -n "$ns" link set "$wan_if" up
    ip -n "$ns" link set "$lan_if" up
}

# start_director I CONF : xvsd of director I in its namespace (checked with -t first); waits
# (30 s max) until its control socket answers.
start_director() {
    local d=$1 conf=$2 ns pid logf
    ns=$(director_ns "$d")
    DIRECTOR_RUNS=$((DIRECTOR_RUNS + 1))
    if [[ ${XE_PMD:-af_xdp} == af_packet ]] && ! in_ns "$ns" nft list table netdev xe_drop >/dev/null 2>&1; then
        lb_kernel_drop "$ns" || fail "nft netdev drop for af_packet in $ns"
    fi
    logf=$XE_TMP/director$d.$DIRECTOR_RUNS.log
    DIRECTOR_LOG[$d]=$logf
    in_ns "$ns" "$BUILD/xvsd" -t -f "$conf" >"$logf" 2>&1 ||
        fail "xvsd -t -f $conf refused director $d's config: $(cat "$logf")"
    ip netns exec "$ns" "$BUILD/xvsd" -f "$conf" >>"$logf" 2>&1 &
    pid=$!
    DIRECTOR_PID[$d]=$pid
    local deadline=$((SECONDS + 30))
    while ! xvsadm_d "$d" -L -n >/dev/null 2>&1; do
        kill -0 "$pid" 2>/dev/null || {
            wait "$pid"
            fail "director $d's xvsd exited early (status $?); log: $(tail -n 30 "$logf")"
        }
        ((SECONDS < deadline)) || fail "director $d's socket not answering after 30 s"
        sleep 0.2
    done
    log "director $d up (pid $pid, log $logf)"
}

# stop_director I [SIGNAL=TERM] : signals director I's xvsd and waits (10 s max); sets
# DIRECTOR_STATUS (137 after KILL).
stop_director() {
    local d=$1 pid=${DIRECTOR_PID[$1]:-}
    [[ -n $pid ]] || return 0
    DIRECTOR_PID[$d]=""
    xvsd_halt "$pid" "${2:-TERM}" "director $d"
    DIRECTOR_STATUS=$HALT_STATUS
}

# ---- BIRD in the cluster tests ------------------------------------------------------------

# start_bird_d I : director I's BIRD in its namespace (socket $XE_TMP/birdI.ctl, log
# $XE_TMP/birdI.log), whose file includes the one its xvsd writes ($XE_TMP/bird-xvsI.conf,
# bgp_defs/ospf_defs `bird_config`); waits for xvsd to have written it.
start_bird_d() {
    local d=$1
    printf 'log "%s" all;\ninclude "%s";\n' "$XE_TMP/bird$d.log" "$XE_TMP/bird-xvs$d.conf" \
        >"$XE_TMP/bird$d.conf"
    wait_until 10 test -s "$XE_TMP/bird-xvs$d.conf" || fail "xvsd $d did not write $XE_TMP/bird-xvs$d.conf"
    bg_ns "$(director_ns "$d")" "$XE_TMP/bird$d.out" bird -f -c "$XE_TMP/bird$d.conf" \
        -s "$XE_TMP/bird$d.ctl" -P "$XE_TMP/bird$d.pid"
}

# start_router_bird [CONF] : the router's BIRD (socket $XE_TMP/bird-rt.ctl) with CONF's
# protocols (default: eBGP with BFD, AS 65000, to both directors' kernel addresses
# 10.10.1.21/22 in AS 65001), every route learnt exported to the kernel with equal paths
# merged into one multipath route. A restarted director is back within seconds (short
# error wait and connect retry, not BIRD's 60 s / 120 s).
start_router_bird() {
    local protos=${1:-}
    if [[ -z $protos ]]; then
        protos='protocol bfd {}
template bgp lb {
    local 10.10.1.254 as 65000;
    hold time 60;
    bfd on;
    error wait time 1, 5;
    connect retry time 2;
    ipv4 { import all; export none; };
}
protocol bgp lb1 from lb { neighbor 10.10.1.21 as 65001; }
protocol bgp lb2 from lb { neighbor 10.10.1.22 as 65001; }'
    fi
    cat >"$XE_TMP/bird-rt.conf" <<EOF
log "$XE_TMP/bird-rt.log" all;
router id 10.10.1.254;
protocol device {}
protocol kernel {
    ipv4 { import none; export all; };
    merge paths on;
}
$protos
EOF
    bg_ns "$NS_RT" "$XE_TMP/bird-rt.out" bird -f -c "$XE_TMP/bird-rt.conf" -s "$XE_TMP/bird-rt.ctl" \
        -P "$XE_TMP/bird-rt.pid"
}

# route_hops VIP : the router's next hops for VIP, sorted, space-separated ("" without a route).
route_hops() { ip -n "$NS_RT" route show "$1" | grep -o 'via [0-9.]*' | awk '{print $2}' | sort | tr '\n' ' ' | sed 's/ $//'; }

# vs_block_checked VIP RS... : an mh FULLNAT service on VIP:80 with a 1 s TCP_CHECK per
# real server (a VIP's quorum follows its servers).
vs_block_checked() {
    local vip=$1 i
    shift
    echo "virtual_server $vip 80 {"
    echo "    protocol TCP"
    echo "    lb_algo mh"
    echo "    lb_kind FNAT"
    echo "    laddr_group_name lips"
    echo "    delay_loop 1"
    for i in "$@"; do
        echo "    real_server $(rs_ip "$i") 8080 { weight 1 TCP_CHECK { connect_timeout 1 retry 1 delay_before_retry 1 } }"
    done
    echo "}"
}
