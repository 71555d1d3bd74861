"""Tunnels test traffic to a TUN-mode real server the way xvsd's TUN mode does, and says what
came back straight from the VIP. For each encapsulation (ipip, gue0 = GUE v0 with a 4-byte
header and an option word, gue1 = GUE v1 direct) one UDP datagram "xvs-rs <kind>" to
VIP:UDP_PORT and one TCP SYN to VIP:TCP_PORT, plus one IPIP datagram to an outer address the
RS does not decapsulate for. Prints "udp <kind> <reply>" and "synack <kind>" per answer.
  xvs_rs_client.py IFACE RS_MAC DIRECTOR RS CLIENT VIP UDP_PORT TCP_PORT GUE_PORT WRONG_RS
"""
import sys
import time

from scapy.all import IP, TCP, UDP, AsyncSniffer, Ether, Raw, conf, sendp

conf.verb = 0
(iface, rs_mac, director, rs, client, vip, udp_port, tcp_port, gue_port, wrong_rs) = sys.argv[1:11]
udp_port, tcp_port, gue_port = int(udp_port), int(tcp_port), int(gue_port)

kinds = ["ipip", "gue0", "gue1"]
udp_sport = {k: 41000 + i for i, k in enumerate(kinds)}
tcp_sport = {k: 42000 + i for i, k in enumerate(kinds)}


def tunnel(kind, outer_dst, inner):
    outer = Ether(dst=rs_mac) / IP(src=director, dst=outer_dst, id=7)
    if kind == "ipip":
        return outer / inner
    gue = UDP(sport=45000, dport=gue_port)
    if kind == "gue0":  # version 0, hlen 1 (one option word), proto 4
        return outer / gue / Raw(b"\x01\x04\x00\x00" + b"\x00\x00\x00\x00") / inner
    return outer / gue / inner  # version 1 direct: the inner IPv4 header right after UDP


got = []  # AsyncSniffer.results is only set once it stops: collect as packets arrive
sniffer = AsyncSniffer(iface=iface, filter=f"ip src {vip}", store=False, prn=got.append)
sniffer.start()
time.sleep(0.5)
frames = []
for k in kinds:
    payload = f"xvs-rs {k}".encode()
    frames.append(tunnel(k, rs, IP(src=client, dst=vip) / UDP(sport=udp_sport[k], dport=udp_port) / payload))
    frames.append(tunnel(k, rs, IP(src=client, dst=vip) / TCP(sport=tcp_sport[k], dport=tcp_port, flags="S", seq=1000)))
frames.append(tunnel("ipip", wrong_rs, IP(src=client, dst=vip) / UDP(sport=41999, dport=udp_port) / b"not for this RS"))
sendp(frames, iface=iface)

deadline = time.time() + 5
seen = set()
while time.time() < deadline and len(seen) < 2 * len(kinds):
    time.sleep(0.2)
    for p in list(got):
        if IP not in p or p[IP].dst != client:
            continue
        if UDP in p and p[UDP].sport == udp_port:
            for k in kinds:
                if p[UDP].dport == udp_sport[k] and ("udp", k) not in seen:
                    seen.add(("udp", k))
                    print(f"udp {k} {bytes(p[UDP].payload).decode(errors='replace')}")
            if p[UDP].dport == 41999:
                print("udp wrong_rs answered")
        if TCP in p and p[TCP].sport == tcp_port and (p[TCP].flags & 0x12) == 0x12:
            for k in kinds:
                if p[TCP].dport == tcp_sport[k] and p[TCP].ack == 1001 and ("synack", k) not in seen:
                    seen.add(("synack", k))
                    print(f"synack {k}")
time.sleep(0.5)  # a late answer to the wrong-address datagram would show here
for p in list(got):
    if UDP in p and p[UDP].dport == 41999 and ("udp", "wrong_rs") not in seen:
        seen.add(("udp", "wrong_rs"))
        print("udp wrong_rs answered")
sniffer.stop()
