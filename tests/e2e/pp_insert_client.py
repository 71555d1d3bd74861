"""Hand-made TCP clients whose FIRST packet after the SYN-ACK carries the request (scapy, run
in the client namespace) for the e2e PROXY protocol test: xvs must insert the header in front
of that segment's data (no separate header segment, since no bare ACK came first).

pp_insert_client.py IFACE VIP_MAC VIP PORT FIRST_SPORT COUNT [reorder]
For each connection (source ports FIRST_SPORT..+COUNT-1): SYN, wait for the SYN-ACK, then one
ACK+PSH segment with a whole POST request (request line, headers and a small body), collect the
reply for a moment, end with a RST. With "reorder" the request goes as two segments sent in the
wrong order: first the end of the body (its seq after the first segment's bytes), then the
request with the body's first 12 bytes at the client ISN + 1. xvs must have shifted the
overtaking segment by the header length before any header went out, or the RS's byte stream
(and nginx's body) would be corrupted. The caller drops the kernel's own RSTs for these ports.
Prints "conn SPORT synack=0|1 http=0|1" per connection and a final "done". Every wait is
bounded."""
import random
import sys
import time

from scapy.all import IP, TCP, AsyncSniffer, Ether, conf, sendp

conf.verb = 0
iface, vip_mac, vip, dport, first_sport, count = (
    sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]), int(sys.argv[5]), int(sys.argv[6]))
reorder = len(sys.argv) > 7 and sys.argv[7] == "reorder"
L2 = Ether(dst=vip_mac)


def plen(p):
    return p[IP].len - p[IP].ihl * 4 - p[TCP].dataofs * 4


def wait_for(got, pred, timeout):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        for p in list(got):
            if pred(p):
                return p
        time.sleep(0.02)
    return None


def one(sport):
    res = {"synack": 0, "http": 0}
    got = []
    sn = AsyncSniffer(iface=iface, store=False, prn=got.append,
                      filter=f"tcp and src host {vip} and src port {dport} and dst port {sport}")
    sn.start()
    time.sleep(0.2)  # the sniffer's socket is open
    try:
        isn = random.randint(0, 0xFFFFFFFF)
        ip = IP(dst=vip, ttl=64)
        syn = ip / TCP(sport=sport, dport=dport, flags="S", seq=isn, window=64240, options=[("MSS", 1460)])
        synack = None
        for _ in range(3):  # SYN retransmissions, bounded
            sendp(L2 / syn, iface=iface)
            synack = wait_for(got, lambda p: TCP in p and (p[TCP].flags & 0x12) == 0x12, 1.0)
            if synack is not None:
                break
        if synack is None:
            return res
        res["synack"] = 1
        ack = (synack[TCP].seq + 1) & 0xFFFFFFFF
        body = f"pp-body-insert-{sport}".encode()
        req = (f"POST /insert HTTP/1.1\r\nHost: pp\r\nConnection: close\r\n"
               f"Content-Type: application/x-www-form-urlencoded\r\nContent-Length: {len(body)}\r\n\r\n").encode() + body
        seq = (isn + 1) & 0xFFFFFFFF
        if reorder:
            cut = len(req) - len(body) + 12  # "pp-body-inse" stays with the request
            second = TCP(sport=sport, dport=dport, flags="PA", seq=(seq + cut) & 0xFFFFFFFF, ack=ack, window=502)
            sendp(L2 / ip / second / req[cut:], iface=iface)
            time.sleep(0.05)
            sendp(L2 / ip / TCP(sport=sport, dport=dport, flags="A", seq=seq, ack=ack, window=502) / req[:cut],
                  iface=iface)
        else:
            sendp(L2 / ip / TCP(sport=sport, dport=dport, flags="PA", seq=seq, ack=ack, window=502) / req,
                  iface=iface)
        wait_for(got, lambda p: TCP in p and plen(p) > 0, 2.0)
        time.sleep(0.2)
        data = b"".join(bytes(p[TCP].payload)[:plen(p)] for p in list(got) if not p[TCP].flags & 0x02)
        res["http"] = int(data.startswith(b"HTTP/1.1 200"))
        sendp(L2 / ip / TCP(sport=sport, dport=dport, flags="R", seq=(seq + len(req)) & 0xFFFFFFFF, window=0),
              iface=iface)
        return res
    finally:
        sn.stop()


for k in range(count):
    sp = first_sport + k
    r = one(sp)
    print(f"conn {sp} synack={r['synack']} http={r['http']}", flush=True)
print("done", flush=True)
