#!/usr/bin/env python3
"""Writes the seed corpora under tests/fuzz/corpus/<target>/ (run from anywhere; idempotent).

pipeline_fuzz seeds replay the flows of the packet tests (tests/packet/*_test.cpp) in the
record format of tests/fuzz/pipeline_fuzz.cpp: the SYN-proxy, TOA, PROXY v1/v2 and UOA
handshakes and data, ARP resolution, ping, timeouts, control-plane changes under traffic and
malformed frames. control_json_fuzz seeds are the request lines of tests/unit/ctl (raw JSON
strings) and docs/control-protocol.md, plus multi-line sessions. The other targets get a few
hand-made seeds."""
import hashlib
import os
import re
import struct

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
OUT = os.path.join(ROOT, "tests", "fuzz", "corpus")

WAN, LAN = 0, 1
# Indexes into pipeline_fuzz.cpp's kAddrs / kPorts tables.
A = dict(client=0, client2=1, vip=2, dir_wan=3, dir_lan=4, lip=5, lip2=6, rs1=7, rs2=8,
         offnet=9, zero=10, loop=11, mcast=12, bcast=13, blacklisted=14, rs3=15)
P = {80: 0, 81: 1, 82: 2, 83: 3, 84: 4, 85: 5, 53: 6, 54: 7, 55: 8, 56: 9, 8080: 10,
     5353: 11, 40000: 12, 40001: 13, 0: 14}
SYN, ACK, FIN, RST, PSH = 0x02, 0x10, 0x01, 0x04, 0x08


def rec(op, dt, body):
    return bytes([op, dt]) + struct.pack("<H", len(body)) + body


def templated(port, src, dst, proto, l4, ipf=0, sport=40000, dport=80, dt=0, hold=False):
    psel = (P[sport] if sport in P else 15) | ((P[dport] if dport in P else 15) << 4)
    body = bytes([A[src] | A[dst] << 4, proto, ipf, psel]) + l4
    return rec((2 << 1) | port | (0x10 if hold else 0), dt, body)


def tcp(seq=1000, ack=0, flags=SYN, opts=b"", payload=b"", window=65535):
    while len(opts) % 4:
        opts += b"\x01"
    doff = (20 + len(opts)) // 4
    return struct.pack("!HHIIBBHHH", 0, 0, seq, ack, doff << 4, flags, window, 0, 0) + opts + payload


def udp(payload=b""):
    return struct.pack("!HHHH", 0, 0, 8 + len(payload), 0) + payload


MSS = b"\x02\x04\x05\xb4"
SYN_OPTS = MSS + b"\x04\x02\x08\x0a\x00\x00\x00\x01\x00\x00\x00\x00\x01\x03\x03\x07"


def reply(port, which=0, flags=0, opts=0, tweak=0, payload=b"", dt=0):
    return rec((3 << 1) | port | (which << 5), dt, bytes([flags, opts, tweak]) + payload)


def control(action, svc, dt=0):
    return rec(4 << 1, dt, bytes([action, svc]))


def arp(port, op, spa, tpa, unicast=False, peer_sha=True, dt=0):
    return rec((5 << 1) | port, dt, bytes([op, A[spa] | A[tpa] << 4,
                                            (1 if unicast else 0) | (2 if peer_sha else 0)]))


def raw(port, frame, fix=False, dt=0):
    return rec(((1 if fix else 0) << 1) | port, dt, frame)


def handshake(dport, client_opts=SYN_OPTS, rs_opts=3, sport=40000):
    """Client SYN, RS SYN-ACK, client ACK (works with and without SYN proxy: the replies
    answer whatever the worker sent last)."""
    return (templated(WAN, "client", "vip", 0, tcp(opts=client_opts), sport=sport, dport=dport) +
            reply(WAN, opts=2) +    # SYN proxy: client ACKs the cookie SYN-ACK
            reply(LAN, opts=rs_opts) +  # RS SYN-ACK (or ACK of the proxied SYN)
            reply(WAN, opts=2))


def pipeline_seeds():
    get = b"GET / HTTP/1.0\r\nHost: x\r\n\r\n"
    seeds = {}
    for dport in (80, 81, 82, 83, 84, 85):
        for cfg in (0x00, 0x01, 0x02):
            s = handshake(dport) + reply(WAN, payload=get) + reply(LAN, payload=b"HTTP/1.0 200 OK\r\n\r\nhello")
            s += reply(WAN, flags=FIN | ACK) + reply(LAN, flags=FIN | ACK) + reply(WAN)
            if cfg & 1:  # ARP-resolved: answer the ARP requests the worker sends
                s = (templated(WAN, "client", "vip", 0, tcp(opts=SYN_OPTS), dport=dport) +
                     reply(WAN) + reply(LAN) + reply(LAN, which=1) + reply(WAN, which=1) + s)
            seeds[f"tcp_{dport}_cfg{cfg}"] = bytes([cfg]) + s
    # Server speaks first (PROXY header segment after the handshake ACK, retransmitted).
    seeds["pp_server_first"] = bytes([0]) + handshake(82) + reply(LAN, payload=b"220 hi\r\n", dt=150) + \
        reply(LAN, payload=b"x", dt=250)
    # Data in the handshake ACK and reordered segments.
    seeds["pp_reorder"] = bytes([0]) + templated(WAN, "client", "vip", 0, tcp(opts=MSS), dport=82) + \
        reply(LAN) + reply(WAN, tweak=0x10, payload=b"second") + reply(WAN, which=1, payload=b"first")
    # SYN proxy: saved packets, ack storm, RS timeout, RS RST, client RST in the handshake.
    seeds["sp_saved"] = bytes([0]) + templated(WAN, "client", "vip", 0, tcp(opts=SYN_OPTS), dport=80) + \
        reply(WAN, opts=2) + reply(WAN, which=1, payload=b"a") + reply(WAN, which=1) * 3 + reply(LAN, opts=3)
    seeds["sp_rs_timeout"] = bytes([0]) + templated(WAN, "client", "vip", 0, tcp(opts=SYN_OPTS), dport=81) + \
        reply(WAN, opts=2, dt=210) + rec(0x10 | 2, 220, b"") + rec(2, 240, b"")
    seeds["sp_rs_rst"] = bytes([0x20]) + templated(WAN, "client", "vip", 0, tcp(), dport=85) + \
        reply(WAN) + reply(LAN, flags=RST | ACK)
    seeds["sp_client_rst"] = bytes([0]) + templated(WAN, "client", "vip", 0, tcp(), dport=80) + \
        reply(WAN) + reply(WAN, which=0, flags=RST)
    seeds["sp_defer"] = bytes([0x12]) + templated(WAN, "client", "vip", 0, tcp(), dport=80) + \
        reply(WAN) + reply(WAN, which=0, payload=get) + reply(LAN) + reply(WAN)
    seeds["sp_small_pool"] = bytes([0x04]) + b"".join(
        templated(WAN, "client", "vip", 0, tcp(seq=1000 + i), sport=40000 + i % 2, dport=80) +
        reply(WAN) for i in range(4))
    seeds["sp_blacklisted"] = bytes([0]) + templated(WAN, "blacklisted", "vip", 0, tcp(), dport=80)
    # UDP: UOA opp/ipo, PROXY v2 datagram, plain; first datagrams and the reply.
    for dport in (53, 54, 55, 56):
        for cfg in (0x00, 0x01, 0x40):
            s = templated(WAN, "client", "vip", 1, udp(b"q" * 30), dport=dport)
            s += templated(WAN, "client", "vip", 1, udp(b"r" * 1400), dport=dport)
            s += reply(LAN, payload=b"answer") + templated(WAN, "client", "vip", 1, udp(b"s"), dport=dport)
            if cfg & 1:
                s += reply(LAN, which=1) + reply(LAN, which=2)
            seeds[f"udp_{dport}_cfg{cfg}"] = bytes([cfg]) + s
    # Full-MTU segments (TOA/PROXY/UOA do not fit: counted fallbacks).
    seeds["toa_full_mtu"] = bytes([0]) + handshake(84) + reply(WAN, payload=b"z" * 1460)
    seeds["uoa_full_mtu"] = bytes([0]) + templated(WAN, "client", "vip", 1, udp(b"u" * 1472), dport=53)
    # ARP and ICMP (arp_icmp_test, neigh_test).
    seeds["arp_vip"] = bytes([0]) + arp(WAN, 1, "client", "vip") + arp(LAN, 1, "rs1", "lip") + \
        arp(WAN, 2, "client", "dir_wan") + arp(WAN, 1, "offnet", "dir_wan") + arp(LAN, 1, "rs2", "vip")
    icmp = struct.pack("!BBHHH", 8, 0, 0, 7, 1) + b"ping"
    seeds["ping"] = bytes([0]) + templated(WAN, "client", "vip", 2, icmp) + \
        templated(WAN, "client", "dir_wan", 2, icmp) + templated(LAN, "rs1", "dir_lan", 2, icmp)
    seeds["neigh_unresolved"] = bytes([1]) + templated(WAN, "client", "vip", 0, tcp(), dport=83) + \
        rec(2, 150, b"") + rec(2, 150, b"") + rec(2, 150, b"") + rec(2, 250, b"")
    # Control-plane changes under traffic (dest removed while conns use it, service deleted...).
    for action in (0x00, 0x10, 0x02, 0x03, 0x05, 0x07):
        seeds[f"control_{action:02x}"] = bytes([0]) + handshake(83) + control(action, 3) + \
            reply(WAN, payload=b"after") + reply(LAN) + control(0x04, 3) + handshake(83, sport=40001)
    # Every dest gone (drop_no_dest), then TCP 84's one-conn-per-dest threshold (overloaded).
    seeds["no_dest"] = bytes([0]) + control(0x00, 3) + control(0x10, 3) + \
        templated(WAN, "client", "vip", 0, tcp(), dport=83)
    seeds["dest_overloaded"] = bytes([0]) + b"".join(
        templated(WAN, src, "vip", 0, tcp(seq=5000 + i), sport=40000 + i % 2, dport=84)
        for i, src in enumerate(("client", "client", "client2", "client2")))
    # ipv4_input_test / defence_test: malformed and martian frames, a burst.
    seeds["martians"] = bytes([0]) + b"".join(
        templated(WAN, src, "vip", 0, tcp(), dport=83, hold=True)
        for src in ("zero", "loop", "mcast", "bcast", "vip", "dir_wan")) + rec(2, 0, b"")
    seeds["ip_flags"] = bytes([0]) + b"".join(
        templated(WAN, "client", "vip", 0, tcp(), ipf=f, dport=83) for f in (1, 2, 4, 8, 0x10, 0x20, 0x40, 0x80))
    seeds["no_service"] = bytes([0]) + templated(WAN, "client", "vip", 0, tcp(), dport=9999) + \
        templated(WAN, "client", "lip", 0, tcp(flags=ACK), dport=80) + \
        templated(WAN, "client", "vip", 0, tcp(flags=ACK), dport=83) + \
        templated(WAN, "client", "vip", 17, b"xx")
    eth = bytes.fromhex("020000000101") + bytes.fromhex("020000000102")
    seeds["raw"] = bytes([0]) + raw(WAN, eth + b"\x86\xdd" + b"\x60" + b"\0" * 39) + \
        raw(WAN, eth + b"\x81\x00\x00\x01\x08\x00") + raw(WAN, eth[:10]) + \
        raw(WAN, eth + b"\x08\x00\x45\x00\x00\x14" + b"\0" * 14, fix=True) + \
        raw(LAN, b"\xff" * 12 + b"\x08\x06" + b"\0" * 28) + raw(WAN, b"\xff" * 1600)
    seeds["expiry"] = bytes([0]) + handshake(83) + rec(2, 255, b"") + reply(WAN, payload=b"late") + \
        templated(WAN, "client", "vip", 1, udp(b"q"), dport=56) + rec(2, 255, b"") + rec(2, 255, b"")
    return seeds


def json_seeds():
    lines = []
    for path in ("tests/unit/ctl/controller_test.cpp", "tests/unit/ctl/xvsadm_socket_test.cpp"):
        p = os.path.join(ROOT, path)
        if os.path.exists(p):
            lines += re.findall(r'R"\((\{.*?\})\)"', open(p).read(), re.S)
    doc = os.path.join(ROOT, "docs", "control-protocol.md")
    if os.path.exists(doc):
        lines += re.findall(r"`(\{\"cmd\".*?\})`", open(doc).read())
        lines += re.findall(r"'(\{\"cmd\".*?\})'", open(doc).read())
    svc = '{"proto":"tcp","vip":"10.10.1.100","port":80}'
    lines += [
        '{"cmd":"list"}', '{"cmd":"stats"}', '{"cmd":"link_show"}', '{"cmd":"neigh_show"}',
        '{"cmd":"conn_show"}', '{"cmd":"addr_show"}', '{"cmd":"route_show"}', '{"cmd":"version"}',
        '{"cmd":"get_timeout"}', '{"cmd":"reload"}', '{"cmd":"zero"}', '{"cmd":"clear"}',
        '{"cmd":"add_dest","service":' + svc + ',"dest":{"addr":"10.10.2.3","port":8080,"weight":2}}',
        '{"cmd":"edit_service","service":' + svc[:-1] + ',"sched":"rr","synproxy":true,"toa":true}}',
        '{"cmd":"del_service","service":' + svc + '}',
        '{"cmd":"add_service","service":{"proto":"tcp","vip":"10.10.1.10\xff","port":80}}',
        '{"cmd":"addr_add","addr":"10.10.3.1","prefix_len":24,"ifname":"wan\xff"}',
        '{"cmd":"prot\xffocol"}',
    ]
    seeds = {}
    for i, line in enumerate(dict.fromkeys(lines)):
        seeds[f"line_{i:03d}"] = line.encode("latin-1", "replace") if "\xff" in line else line.encode()
    # Sessions: several requests on one connection, as xvsadm -R would send them.
    seeds["session_add"] = "\n".join([
        '{"cmd":"add_service","service":{"proto":"udp","vip":"10.10.1.101","port":53,"sched":"rr","uoa":"opp"}}',
        '{"cmd":"add_dest","service":{"proto":"udp","vip":"10.10.1.101","port":53},"dest":{"addr":"10.10.2.2","port":5353}}',
        '{"cmd":"add_laddr","service":{"proto":"udp","vip":"10.10.1.101","port":53},"laddr":"10.10.2.101","ifname":"lan0"}',
        '{"cmd":"list"}', '{"cmd":"get_laddr","service":{"proto":"udp","vip":"10.10.1.101","port":53}}',
        '{"cmd":"del_laddr","service":{"proto":"udp","vip":"10.10.1.101","port":53},"laddr":"10.10.2.101"}',
    ]).encode()
    # Configuration text with a 0xFF byte (first line '#'): a third port's name and the reload
    # error; the replies of reload, addr_show and link_show carry it (issue 10's abort).
    seeds["config_bad_utf8"] = b'#prot\xffocol TCP\n{"cmd":"reload"}\n{"cmd":"addr_show"}\n{"cmd":"link_show"}'
    return seeds


def other_seeds():
    cfg = os.path.join(ROOT, "tests", "data")
    seeds = {"config_parser_fuzz": {}, "tcp_options_fuzz": {}, "toa_fuzz": {}}
    if os.path.isdir(cfg):
        for name in sorted(os.listdir(cfg)):
            p = os.path.join(cfg, name)
            if name.endswith(".conf") and os.path.getsize(p) < 16384:
                seeds["config_parser_fuzz"][name] = open(p, "rb").read()
    # Raw-string configurations of the config unit tests and the e2e config heredoc.
    n = 0
    for path in ("tests/unit/ctl/config_parser_test.cpp", "tests/unit/ctl/config_check_test.cpp",
                 "tests/unit/ctl/config_apply_test.cpp"):
        p = os.path.join(ROOT, path)
        if not os.path.exists(p):
            continue
        for text in re.findall(r'R"\((.*?)\)"', open(p).read(), re.S):
            if len(text) > 40 and len(text) < 8192:
                seeds["config_parser_fuzz"][f"unit_{n:03d}"] = text.encode()
                n += 1
    lib = os.path.join(ROOT, "tests", "e2e", "lib.sh")
    if os.path.exists(lib):
        for text in re.findall(r"cat <<EOF\n(.*?)\nEOF", open(lib).read(), re.S):
            if "virtual_server" in text or "netif_defs" in text:
                seeds["config_parser_fuzz"]["e2e_lib"] = text.encode()
    seeds["config_parser_fuzz"]["minimal"] = (
        b"virtual_server 10.10.1.100 80 {\n protocol TCP\n lb_algo wrr\n lb_kind FNAT\n"
        b" laddr_group_name l\n syn_proxy\n toa on\n real_server 10.10.2.2 8080 { weight 1 }\n}\n"
        b"local_address_group l {\n 10.10.2.100-10.10.2.103 lan0\n}\n")
    seeds["tcp_options_fuzz"]["syn_opts"] = SYN_OPTS
    seeds["tcp_options_fuzz"]["sack"] = b"\x01\x01\x05\x12" + b"\0\0\0\1\0\0\0\2" * 2 + b"\1\1\x08\x0a" + b"\0" * 8
    seeds["toa_fuzz"]["ack"] = b"\x00" + bytes.fromhex("450000340000400040060000") + b"\x0a\x0a\x01\x02\x0a\x0a\x01\x64" + \
        tcp(flags=ACK, opts=b"\x01\x01\x08\x0a" + b"\0" * 8)
    return seeds


def write(target, seeds):
    d = os.path.join(OUT, target)
    os.makedirs(d, exist_ok=True)
    for name, data in seeds.items():
        with open(os.path.join(d, name), "wb") as f:
            f.write(data)


if __name__ == "__main__":
    write("pipeline_fuzz", pipeline_seeds())
    write("control_json_fuzz", json_seeds())
    for target, seeds in other_seeds().items():
        write(target, seeds)
    total = sum(os.path.getsize(os.path.join(dp, f)) for dp, _, fs in os.walk(OUT) for f in fs)
    print(f"corpus: {total} bytes under {OUT}")
