// The status page's inline CSS and script (ctl/status_page.h). The script mirrors main_html()
// of status_page.cpp: it fetches status.json every period_s seconds and renders the same
// markup into <main>, so that the page without JavaScript (the server's rendering) and with it
// read alike. No external resource: the page's Content-Security-Policy allows none.
#include "ctl/status_page.h"

namespace xvs::ctl {

const std::string_view kStatusPageCss = R"css(
:root{--bg:#f6f7f9;--fg:#1c2330;--mute:#5b6575;--card:#fff;--line:#d9dee6;--up:#1f8a4c;--down:#c62828;--inh:#b26a00;--l1:#2f6fde;--l2:#8a4fd8;--l3:#c62828}
@media (prefers-color-scheme:dark){:root{--bg:#12161c;--fg:#e3e8ef;--mute:#9aa5b5;--card:#1b2129;--line:#2d3643;--l1:#6ea0ff;--l2:#b48cff;--l3:#ff6b6b}}
*{box-sizing:border-box}
body{margin:0;font:14px/1.4 system-ui,-apple-system,"Segoe UI",Roboto,"DejaVu Sans",sans-serif;background:var(--bg);color:var(--fg)}
header{display:flex;flex-wrap:wrap;gap:.3em 1em;align-items:baseline;padding:.6em 1em;border-bottom:1px solid var(--line);background:var(--card)}
header h1{margin:0;font-size:1.3em}
.note,#updated{color:var(--mute);font-size:.9em}
#updated.stale{color:var(--down);font-weight:600}
a{color:var(--l1)}
main{padding:.8em;max-width:120em;margin:0 auto}
h2{font-size:1.05em;margin:0 0 .4em;word-break:break-word}
.summary{display:grid;grid-template-columns:repeat(auto-fit,minmax(9em,1fr));gap:.6em;margin-bottom:.8em}
.card{background:var(--card);border:1px solid var(--line);border-radius:6px;padding:.5em .8em;color:var(--mute)}
.card b{display:block;font-size:1.6em;color:var(--fg);font-variant-numeric:tabular-nums}
.card.warn b{color:var(--down)}
article{background:var(--card);border:1px solid var(--line);border-radius:6px;padding:.7em .8em;margin-bottom:.8em}
.badge{display:inline-block;font-size:.75em;font-weight:600;padding:.1em .5em;margin-left:.3em;border-radius:1em;background:var(--line);vertical-align:middle}
.badge.flag{background:transparent;border:1px solid var(--l2);color:var(--l2)}
.kpis{margin:.2em 0 .5em;color:var(--mute);font-variant-numeric:tabular-nums}
.charts{display:grid;grid-template-columns:repeat(auto-fit,minmax(16em,1fr));gap:.6em;margin-bottom:.5em}
.chart{margin:0}
.chart figcaption{font-size:.8em;color:var(--mute)}
.chart figcaption span{font-weight:600;margin-left:.4em}
.chart svg{width:100%;height:4.5em;background:var(--bg);border:1px solid var(--line);border-radius:4px}
polyline{fill:none;stroke-width:1.5;vector-effect:non-scaling-stroke}
polyline.l1,span.l1{stroke:var(--l1);color:var(--l1)}
polyline.l2,span.l2{stroke:var(--l2);color:var(--l2)}
polyline.l3,span.l3{stroke:var(--l3);color:var(--l3)}
span.max{font-weight:400!important}
.scroll{overflow-x:auto}
table{border-collapse:collapse;width:100%;font-variant-numeric:tabular-nums}
th,td{padding:.25em .5em;border-bottom:1px solid var(--line);text-align:left;white-space:nowrap}
th{font-size:.8em;color:var(--mute);font-weight:600}
td.num{text-align:right}
td.check,td.help{white-space:normal;min-width:12em;color:var(--mute);font-size:.9em}
td.addr{font-family:ui-monospace,"DejaVu Sans Mono",monospace}
.none{color:var(--mute);font-style:italic}
.state{font-weight:700}
.state.up{color:var(--up)}
.state.down{color:var(--down)}
.state.inhibited{color:var(--inh)}
tr.dest.down td,tr.dest.inhibited td{background:rgba(198,40,40,.07)}
.age{color:var(--mute);font-size:.85em}
meter{width:5em;vertical-align:middle}
.grid{display:grid;grid-template-columns:repeat(auto-fit,minmax(min(100%,30em),1fr));gap:.8em}
.grid article{margin:0;min-width:0}
@media (max-width:40em){main{padding:.4em}body{font-size:13px}.grid{grid-template-columns:1fr}}
@media (min-width:110em){body{font-size:16px}}
)css";

const std::string_view kStatusPageScript = R"js(
(function () {
  'use strict';
  var MAP = {'&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;'};
  function esc(s) { return String(s == null ? '' : s).replace(/[&<>"']/g, function (c) { return MAP[c]; }); }
  function num(o, k) { return o && typeof o[k] === 'number' ? o[k] : 0; }
  function str(o, k) { return o && typeof o[k] === 'string' ? o[k] : ''; }
  function arr(o, k) { return o && Array.isArray(o[k]) ? o[k] : []; }
  function scaled(v, small) {
    if (v >= 1e9) return (v / 1e9).toFixed(1) + 'G';
    if (v >= 1e6) return (v / 1e6).toFixed(1) + 'M';
    if (v >= 1e4) return (v / 1e3).toFixed(1) + 'k';
    return v.toFixed(small);
  }
  function fmtCount(v) { return scaled(v, 0); }
  function fmtRate(v) { return v < 10 ? v.toFixed(1) : scaled(v, 0); }
  function fmtBytes(v) {
    var units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'], u = 0;
    while (v >= 1024 && u + 1 < units.length) { v /= 1024; u++; }
    return (u === 0 ? v.toFixed(0) : v.toFixed(1)) + ' ' + units[u];
  }
  function utc(t) { return new Date(t * 1000).toISOString().replace('T', ' ').substring(0, 19) + ' UTC'; }
  function chart(title, lines, slots) {
    var W = 3000, H = 600, max = 1, n = Math.max(slots, 2), h, i;
    lines.forEach(function (l) { l[0].forEach(function (p) { if (typeof p === 'number' && p > max) max = p; }); });
    h = '<figure class="chart"><figcaption>' + esc(title);
    lines.forEach(function (l) {
      var last = l[0].length && typeof l[0][l[0].length - 1] === 'number' ? l[0][l[0].length - 1] : 0;
      h += ' <span class="' + l[1] + '">' + fmtRate(last) + '</span>';
    });
    h += ' <span class="max">max ' + fmtRate(max) + '</span></figcaption>';
    h += '<svg viewBox="0 0 3000 600" preserveAspectRatio="none" role="img" aria-label="' + esc(title) + '">';
    lines.forEach(function (l) {
      var pts = l[0], count = pts.length, s = '';
      if (!count) return;
      for (i = 0; i < count; i++) {
        var v = typeof pts[i] === 'number' ? pts[i] : 0;
        s += Math.round((n - count + i) * W / (n - 1)) + ',' + Math.round(H - v / max * (H - 20) - 10) + ' ';
      }
      h += '<polyline class="' + l[1] + '" points="' + s + '"/>';
    });
    return h + '</svg></figure>';
  }
  function badge(t, cls) { return '<span class="' + (cls || 'badge') + '">' + esc(t) + '</span>'; }
  function cell(t, cls) { return '<td class="' + (cls || 'num') + '">' + t + '</td>'; }
  function service(s, index, slots) {
    var name = str(s, 'name'), hist = s.history || {}, dests = arr(s, 'dests');
    var h = '<article class="svc" id="svc-' + index + '" data-service="' + esc(name) + '">';
    h += '<h2>' + esc(name) + ' ' + badge(str(s, 'mode')) + badge(str(s, 'sched'));
    arr(s, 'flags').forEach(function (f) { if (typeof f === 'string') h += badge(f, 'badge flag'); });
    h += '</h2><p class="kpis">' + fmtCount(num(s, 'conns')) + ' conns · ' + fmtCount(num(s, 'active')) +
      ' active · ' + fmtCount(num(s, 'inactive')) + ' inactive · ' + fmtRate(num(s, 'cps')) + ' conn/s · ' +
      fmtRate(num(s, 'inpps')) + '/' + fmtRate(num(s, 'outpps')) + ' pps in/out · ' +
      fmtBytes(num(s, 'inbytes')) + '/' + fmtBytes(num(s, 'outbytes')) + ' in/out</p>';
    h += '<div class="charts">' + chart('conn/s', [[arr(hist, 'cps'), 'l1']], slots) +
      chart('pps in / out', [[arr(hist, 'inpps'), 'l1'], [arr(hist, 'outpps'), 'l2']], slots) + '</div>';
    h += '<div class="scroll"><table class="dests"><thead><tr><th>Real server</th><th>Health</th>' +
      '<th>Last check</th><th>Weight</th><th>Active</th><th>Inactive</th><th>Conns</th><th>Conn/s</th>' +
      '<th>pps in</th><th>pps out</th><th>Bytes in</th><th>Bytes out</th></tr></thead><tbody>';
    if (!dests.length) h += '<tr><td colspan="12" class="none">no real servers</td></tr>';
    dests.forEach(function (d) {
      var health = str(d, 'health'), shown = health, check = esc(str(d, 'check'));
      if (!d.checked) shown += ' (no check)';
      if (d.in_service === false) shown += ', out of service';
      if (num(d, 'check_time') > 0) check += ' <span class="age">' + esc(utc(num(d, 'check_time')).substring(11, 19)) + '</span>';
      h += '<tr class="dest ' + esc(health) + '" data-dest="' + esc(str(d, 'name')) + '" data-health="' +
        esc(health) + '" data-conns="' + num(d, 'conns').toFixed(0) + '">';
      h += '<td class="addr">' + esc(str(d, 'name')) + '</td><td><span class="state ' + esc(health) + '">' +
        esc(shown) + '</span></td>' + cell(check, 'check') + cell(fmtCount(num(d, 'weight'))) +
        cell(fmtCount(num(d, 'active'))) + cell(fmtCount(num(d, 'inactive'))) + cell(fmtCount(num(d, 'conns'))) +
        cell(fmtRate(num(d, 'cps'))) + cell(fmtRate(num(d, 'inpps'))) + cell(fmtRate(num(d, 'outpps'))) +
        cell(fmtBytes(num(d, 'inbytes'))) + cell(fmtBytes(num(d, 'outbytes'))) + '</tr>';
    });
    return h + '</tbody></table></div></article>';
  }
  function render(st) {
    var hist = st.history || {}, slots = Math.max(arr(hist, 't').length, 2), services = arr(st, 'services');
    var drops = st.drops || {}, pools = st.pools || {}, conns = pools.conns || {}, dests = 0, up = 0, cps = 0, h;
    services.forEach(function (s) {
      cps += num(s, 'cps');
      arr(s, 'dests').forEach(function (d) { dests++; if (str(d, 'health') === 'up') up++; });
    });
    function card(value, label, cls) { h += '<div class="card ' + (cls || '') + '"><b>' + value + '</b>' + label + '</div>'; }
    h = '<section class="summary">';
    card(String(services.length), 'services');
    card(up + '/' + dests, 'real servers up', up < dests ? 'warn' : '');
    card(fmtRate(cps), 'conn/s');
    card(fmtRate(num(drops, 'rate')), 'drops/s', num(drops, 'rate') > 0 ? 'warn' : '');
    card(fmtCount(num(conns, 'used')) + '/' + fmtCount(num(conns, 'capacity')), 'conn entries');
    h += '</section><section id="services">';
    if (!services.length) h += '<p class="none">No virtual service is configured.</p>';
    services.forEach(function (s, i) { h += service(s, i, slots); });
    h += '</section><section class="grid"><article id="drops"><h2>Drops</h2>';
    h += chart('drops/s, all reasons', [[arr(hist, 'drops'), 'l3']], slots);
    h += '<div class="scroll"><table><thead><tr><th>Reason</th><th>Total</th><th>per s</th><th>Meaning</th></tr></thead><tbody>';
    if (!arr(drops, 'reasons').length) h += '<tr><td colspan="4" class="none">no drop so far</td></tr>';
    arr(drops, 'reasons').forEach(function (r) {
      h += '<tr data-reason="' + esc(str(r, 'reason')) + '" data-total="' + num(r, 'total').toFixed(0) +
        '"><td class="addr">' + esc(str(r, 'reason')) + '</td>' + cell(fmtCount(num(r, 'total'))) +
        cell(fmtRate(num(r, 'rate'))) + cell(esc(str(r, 'help')), 'help') + '</tr>';
    });
    h += '</tbody></table></div></article><article id="workers"><h2>Workers</h2><div class="scroll"><table><thead><tr>' +
      '<th>Worker</th><th>rx pps</th><th>tx pps</th><th>forwarded pps</th><th>drops/s</th><th>Conn entries</th></tr></thead><tbody>';
    arr(st, 'workers').forEach(function (w) {
      var cap = Math.max(num(w, 'conn_capacity'), 1);
      h += '<tr><td>' + fmtCount(num(w, 'id')) + '</td>' + cell(fmtRate(num(w, 'rx_pps'))) + cell(fmtRate(num(w, 'tx_pps'))) +
        cell(fmtRate(num(w, 'forwarded_pps'))) + cell(fmtRate(num(w, 'drops_pps'))) +
        cell(fmtCount(num(w, 'conns')) + '/' + fmtCount(num(w, 'conn_capacity')) +
          ' <meter max="1" value="' + (num(w, 'conns') / cap).toFixed(4) + '"></meter>') + '</tr>';
    });
    h += '</tbody></table></div></article><article id="pools"><h2>Pools</h2><div class="scroll"><table><thead><tr>' +
      '<th>Pool</th><th>In use</th><th>Size</th><th>Use</th></tr></thead><tbody>';
    function pool(name, used, size) {
      h += '<tr><td class="addr">' + esc(name) + '</td>' + cell(fmtCount(used)) + cell(fmtCount(size)) +
        '<td><meter max="1" value="' + (size > 0 ? used / size : 0).toFixed(4) + '"></meter></td></tr>';
    }
    pool('conn entries', num(conns, 'used'), num(conns, 'capacity'));
    arr(pools, 'laddrs').forEach(function (l) {
      pool('local ports ' + str(l, 'addr') + ' (' + fmtCount(num(l, 'conns')) + ' conns)', num(l, 'ports') - num(l, 'free_ports'), num(l, 'ports'));
    });
    arr(pools, 'mbufs').forEach(function (m) { pool('mbufs ' + str(m, 'port'), num(m, 'in_use'), num(m, 'size')); });
    return h + '</tbody></table></div></article></section>';
  }
  var period = 2000, shown = document.getElementById('updated').textContent;
  function refresh() {
    var updated = document.getElementById('updated');
    // A hidden tab costs xvsd nothing: it catches up when shown again.
    if (document.hidden) { setTimeout(refresh, period); return; }
    fetch('status.json', {cache: 'no-store'}).then(function (r) {
      if (!r.ok) throw new Error('HTTP ' + r.status);
      return r.json();
    }).then(function (st) {
      document.getElementById('main').innerHTML = render(st);
      document.body.setAttribute('data-rendered', 'script');
      shown = utc(num(st, 'time'));
      updated.textContent = shown;
      updated.className = '';
      if (num(st, 'period_s') > 0) period = num(st, 'period_s') * 1000;
    }).catch(function (e) {
      updated.textContent = 'not refreshed (' + e.message + '): data of ' + shown;
      updated.className = 'stale';
    }).then(function () { setTimeout(refresh, period); });
  }
  setTimeout(refresh, 0);
})();
)js";

}  // namespace xvs::ctl
