#!/usr/bin/env bash
# The metrics endpoint (metrics_listen, default 127.0.0.1:9469 in the director's namespace):
# scraped with curl before and after 50 HTTP requests through a FULLNAT VIP (two real
# servers) and 5 bare TCP ACKs to the VIP that match no connection. promtool (Prometheus's
# own checker) accepts both scrapes; the service's conns grow by exactly 50, its dests' sum to
# it, the packet counters and lb_forwarded move, drop_tcp_no_conn grows by the 5 ACKs, the
# ports' rx counters move. A second listener address from the config (metrics_listen on the
# director's LAN address) is what xvsd binds, and a reload changing it is logged as needing a
# restart, not silently ignored. / is the status page (200 over loopback), another path 404.
# Every series contrib/grafana/xvs-director.json queries exists. The worker's busy and idle
# poll counts move; the mbuf pools' size is free + used.
source "$(dirname "$0")/lib.sh"
e2e_init "${1:-build}"
need_tools curl promtool hping3

topo_up 2
start_rs_http 1
start_rs_http 2
conf=$XE_TMP/xvs.conf
{ config_head; vs_block TCP "$VIP" 80 "1:8080:1 2:8080:1" rr; } >"$conf"
start_xvsd "$conf"

URL=http://127.0.0.1:9469/metrics
scrape() { in_ns "$NS_LB" curl -s --max-time 5 -o "$1" -w '%{http_code} %{content_type}' "$URL"; }
# value FILE SERIES: the sample's value ('' when absent); SERIES as in the text, labels included.
value() { awk -v s="$2" 'index($0, s " ") == 1 { print $NF; exit }' "$1"; }
sum_of() { awk -v p="$2" 'index($0, p) == 1 { s += $NF } END { printf "%d", s }' "$1"; }

head=$(scrape "$XE_TMP/m1") || fail "scrape 1 failed"
assert_eq "200 text/plain; version=0.0.4; charset=utf-8" "$head" "status and content type of /metrics"
promtool check metrics <"$XE_TMP/m1" >"$XE_TMP/promtool1" 2>&1 ||
    fail "promtool rejects scrape 1: $(head -n 5 "$XE_TMP/promtool1")"
pass "promtool check metrics accepts scrape 1 ($(grep -c '^# TYPE' "$XE_TMP/m1") families, $(grep -vc '^#' "$XE_TMP/m1") samples)"

http_loop 50 "$XE_TMP/http"
assert_eq 50 "$(grep -c '^rs[12]$' "$XE_TMP/http")" "requests answered through the VIP"
# Five ACKs that belong to no connection: dropped and counted (drop_tcp_no_conn).
in_ns "$NS_CL" timeout 10 hping3 -q -A -c 5 -i u20000 -p 80 "$VIP" >/dev/null 2>&1
sleep 2.5  # one rate-estimator period (2 s) for the rate gauges

scrape "$XE_TMP/m2" >/dev/null || fail "scrape 2 failed"
promtool check metrics <"$XE_TMP/m2" >"$XE_TMP/promtool2" 2>&1 ||
    fail "promtool rejects scrape 2: $(head -n 5 "$XE_TMP/promtool2")"
svc="{service=\"TCP $VIP:80\"}"
c1=$(value "$XE_TMP/m1" "xvs_service_connections_total$svc")
c2=$(value "$XE_TMP/m2" "xvs_service_connections_total$svc")
assert_eq 0 "${c1:-missing}" "service conns before the traffic"
assert_eq 50 "${c2:-missing}" "service conns after 50 requests"
dest_sum=$(sum_of "$XE_TMP/m2" "xvs_dest_connections_total{service=\"TCP $VIP:80\",")
assert_eq 50 "$dest_sum" "the dests' conns sum to the service's"
for i in 1 2; do
    d=$(value "$XE_TMP/m2" "xvs_dest_connections_total{service=\"TCP $VIP:80\",dest=\"$(rs_ip $i):8080\"}")
    assert_eq 25 "${d:-missing}" "rr: conns of rs$i"
done
inpkts=$(value "$XE_TMP/m2" "xvs_service_packets_total{service=\"TCP $VIP:80\",direction=\"in\"}")
assert_ge "${inpkts:-0}" 200 "service packets in (>= 4 per request: SYN, ACK, request, FIN)"
fwd1=$(value "$XE_TMP/m1" 'xvs_events_total{event="lb_forwarded",worker="0"}')
fwd2=$(value "$XE_TMP/m2" 'xvs_events_total{event="lb_forwarded",worker="0"}')
assert_ge $((fwd2 - fwd1)) 400 "lb_forwarded grew (>= 8 packets per request, both directions)"
nc1=$(value "$XE_TMP/m1" 'xvs_drops_total{reason="drop_tcp_no_conn",worker="0"}')
nc2=$(value "$XE_TMP/m2" 'xvs_drops_total{reason="drop_tcp_no_conn",worker="0"}')
assert_eq 5 $((nc2 - nc1)) "drop_tcp_no_conn grew by the 5 stray ACKs"
assert_eq "$(counter drop_tcp_no_conn)" "$nc2" "metrics and xvsctl stats agree on drop_tcp_no_conn"
rx1=$(value "$XE_TMP/m1" 'xvs_port_packets_total{port="wan0",direction="rx"}')
rx2=$(value "$XE_TMP/m2" 'xvs_port_packets_total{port="wan0",direction="rx"}')
assert_ge $((rx2 - rx1)) 200 "wan0 rx packets grew (>= 4 per request)"
used=$(value "$XE_TMP/m2" 'xvs_conn_table_used{worker="0"}')
assert_ge "${used:-0}" 1 "conn table entries in use (TIME_WAIT conns)"
assert_eq 1 "$(value "$XE_TMP/m2" 'xvs_workers')" "xvs_workers"
# The worker's poll loop: busy iterations grew with the traffic, idle ones with the time.
for r in busy idle; do
    p1=$(value "$XE_TMP/m1" "xvs_worker_polls_total{worker=\"0\",result=\"$r\"}")
    p2=$(value "$XE_TMP/m2" "xvs_worker_polls_total{worker=\"0\",result=\"$r\"}")
    assert_ge $((${p2:-0} - ${p1:-0})) 1 "$r polls of worker 0 grew"
done
# The mbuf pools: size = free + used. In use once the traffic is over: AF_XDP's fill ring
# holds its mbufs; af_packet copies into mbufs as frames come, so an idle worker holds none.
for pool in xvs_mbufs_wan0 xvs_mbufs_lan0; do
    size=$(value "$XE_TMP/m2" "xvs_mempool_size{pool=\"$pool\"}")
    free=$(value "$XE_TMP/m2" "xvs_mempool_free{pool=\"$pool\"}")
    used=$(value "$XE_TMP/m2" "xvs_mempool_used{pool=\"$pool\"}")
    assert_eq "${size:-missing}" $((${free:-0} + ${used:-0})) "$pool size = free + used"
    if [[ ${XE_PMD:-af_xdp} == af_xdp ]]; then
        assert_ge "${used:-0}" 1 "$pool mbufs in use (the AF_XDP fill ring's)"
    else
        assert_eq 0 "${used:-missing}" "$pool mbufs in use by an idle af_packet director"
    fi
done
# The -Z of ipvsadm zeroes what xvsadm shows, never a Prometheus counter.
xvsadm_ns -Z >/dev/null || fail "xvsadm -Z"
scrape "$XE_TMP/m3" >/dev/null || fail "scrape 3 failed"
assert_eq 50 "$(value "$XE_TMP/m3" "xvs_service_connections_total$svc")" "service conns after xvsadm -Z (counters never go back)"

# The Grafana dashboard (contrib/grafana) asks only for series that exist: every family and
# every event name its queries use is in the scrape.
dash=$XE_LIB_DIR/../../contrib/grafana/xvs-director.json
[[ -f $dash ]] || fail "no dashboard at $dash"
"$XE_PY" -c 'import json, sys; json.load(open(sys.argv[1]))' "$dash" || fail "the dashboard is not valid JSON"
for fam in $(grep -o 'xvs_[a-z_]*' "$dash" | sort -u); do
    grep -q "^# TYPE $fam " "$XE_TMP/m2" || fail "the dashboard uses $fam, which the scrape does not have"
done
for ev in $(grep -o 'event=~\\"[a-z_|]*' "$dash" | sed 's/.*"//' | tr '|' '\n' | sort -u); do
    grep -q "^xvs_events_total{event=\"$ev\"," "$XE_TMP/m2" || fail "the dashboard uses event $ev, which the scrape does not have"
done
pass "every series the dashboard queries is in the scrape"

# Other paths and methods.
assert_eq 404 "$(in_ns "$NS_LB" curl -s -o /dev/null -w '%{http_code}' --max-time 5 http://127.0.0.1:9469/nothing)" "GET /nothing is 404"
# / is the status page (test_status_page.sh), open to loopback by default.
assert_eq "200 text/html; charset=utf-8" "$(in_ns "$NS_LB" curl -s -o /dev/null -w '%{http_code} %{content_type}' --max-time 5 http://127.0.0.1:9469/)" "GET / is the status page"
assert_eq 405 "$(in_ns "$NS_LB" curl -s -o /dev/null -w '%{http_code}' --max-time 5 -X POST "$URL")" "POST /metrics is 405"

# A reload that changes metrics_listen says it needs a restart; the old listener serves on.
sed -i "s|    log_level info|    log_level info\n    metrics_listen 127.0.0.1:9470|" "$conf"
xvsadm_ns --reload >/dev/null 2>&1 || fail "reload refused: $(tail -n 5 "$XVSD_LOG")"
wait_until 5 grep -q "reload: metrics_listen changed: takes effect at the next restart" "$XVSD_LOG" ||
    fail "no restart notice for metrics_listen: $(tail -n 5 "$XVSD_LOG")"
assert_eq 200 "$(in_ns "$NS_LB" curl -s -o /dev/null -w '%{http_code}' --max-time 5 "$URL")" "the old listener after the reload"
# After a restart, the configured address is the one bound (the LAN address here).
stop_xvsd TERM
sed -i "s|metrics_listen 127.0.0.1:9470|metrics_listen 10.10.2.9:9470|" "$conf"
in_ns "$NS_LB" ip addr add 10.10.2.9/32 dev lo
start_xvsd "$conf"
assert_eq 200 "$(in_ns "$NS_LB" curl -s -o /dev/null -w '%{http_code}' --max-time 5 http://10.10.2.9:9470/metrics)" "metrics on the configured 10.10.2.9:9470"
in_ns "$NS_LB" curl -s --max-time 2 -o /dev/null "$URL" && fail "127.0.0.1:9469 still answers after the move"
grep -q "metrics on http://10.10.2.9:9470/metrics" "$XVSD_LOG" || fail "xvsd did not log its metrics address"
pass "metrics endpoint"
