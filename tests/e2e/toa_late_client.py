"""Hand-made TCP connections straight to a real server (no director) for the e2e rs readers
test, carrying TOA options the way a test wants them (scapy, bounded in time).

toa_late_client.py IFACE RS_MAC RS_IP PORT FIRST_SPORT TOA_ADDR DUAL_PORT
Five connections from ports FIRST_SPORT, +1, ..., +4, each SYN, SYN-ACK, then:
  onack   the handshake's ACK carries TOA (port FIRST_SPORT+100, TOA_ADDR) behind two NOPs (the
          options are walked, not read at a fixed place), then data without
  late    a bare ACK, then data carrying TOA (port FIRST_SPORT+101, TOA_ADDR)
  none    a bare ACK, then 10 one-byte data segments, none with TOA; each carries 4 NOPs so
          that the kernel takes it on its slow path, where the sockops program sees headers
          (a segment with TOA is always there: its header is longer than the predicted one)
  v6      the handshake's ACK carries the 20-byte TOA of an IPv6 client (2001:db8::55, port
          FIRST_SPORT+103), which an IPv4 socket cannot show
  v6dual  the same (port FIRST_SPORT+104) to DUAL_PORT, a dual-stack socket, which can
and a RST at the end. The caller drops the kernel's own RSTs for these ports.
Prints "conn VARIANT SPORT synack=0|1" per connection."""
import random
import socket
import struct
import sys
import time

from scapy.all import IP, TCP, AsyncSniffer, Ether, conf, sendp

conf.verb = 0
iface, rs_mac, rs_ip, port, first_sport, toa_addr, dual_port = (
    sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]), int(sys.argv[5]), sys.argv[6],
    int(sys.argv[7]))
L2 = Ether(dst=rs_mac)


def toa(port):
    return [(254, struct.pack("!H", port) + socket.inet_aton(toa_addr)), ("NOP", None), ("NOP", None)]


def toa_v6(port):
    return [(254, struct.pack("!H", port) + socket.inet_pton(socket.AF_INET6, "2001:db8::55")),
            ("NOP", None), ("NOP", None)]


def wait_for(got, pred, timeout):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        for p in list(got):
            if pred(p):
                return p
        time.sleep(0.02)
    return None


def one(variant, sport, toa_port, dport):
    got = []
    sn = AsyncSniffer(iface=iface, store=False, prn=got.append,
                      filter=f"tcp and src host {rs_ip} and src port {dport} and dst port {sport}")
    sn.start()
    time.sleep(0.2)
    try:
        isn = random.randint(0, 0xFFFFFFFF)
        ip = IP(dst=rs_ip, ttl=64)
        synack = None
        for _ in range(3):
            sendp(L2 / ip / TCP(sport=sport, dport=dport, flags="S", seq=isn, window=64240,
                                options=[("MSS", 1460)]), iface=iface)
            synack = wait_for(got, lambda p: TCP in p and (p[TCP].flags & 0x12) == 0x12, 1.0)
            if synack is not None:
                break
        if synack is None:
            return 0
        seq, ack = isn + 1, synack[TCP].seq + 1

        def seg(flags, data=b"", options=()):
            return L2 / ip / TCP(sport=sport, dport=dport, flags=flags, seq=seq, ack=ack,
                                 window=64240, options=list(options)) / data

        if variant in ("onack", "v6", "v6dual"):
            opts = [("NOP", None), ("NOP", None)] + toa(toa_port)[:1] if variant == "onack" else toa_v6(toa_port)
            sendp(seg("A", options=opts), iface=iface)
            time.sleep(0.1)
            sendp(seg("PA", b"hello\n"), iface=iface)
            seq += 6
        elif variant == "late":
            sendp(seg("A"), iface=iface)
            time.sleep(0.1)
            sendp(seg("PA", b"hello\n", toa(toa_port)), iface=iface)
            seq += 6
        else:
            sendp(seg("A"), iface=iface)
            for _ in range(10):
                time.sleep(0.02)
                sendp(seg("PA", b"x", [("NOP", None)] * 4), iface=iface)
                seq += 1
        time.sleep(0.3)
        sendp(seg("R"), iface=iface)
        return 1
    finally:
        sn.stop()


for i, variant in enumerate(["onack", "late", "none", "v6", "v6dual"]):
    sport = first_sport + i
    dport = dual_port if variant == "v6dual" else port
    print(f"conn {variant} {sport} synack={one(variant, sport, first_sport + 100 + i, dport)}",
          flush=True)
