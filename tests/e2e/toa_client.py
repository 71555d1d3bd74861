"""Hand-made TCP clients for the e2e TOA test (scapy, run in the client namespace).

toa_client.py IFACE VIP_MAC VIP PORT FIRST_SPORT FORGED_ADDR
For each scripted connection: SYN (MSS 1460, SACK, timestamps, wscale), wait for the SYN-ACK,
then an unusual first packet that completes the handshake (the cases of seed 001):
  ackdata      ACK+PSH+data (no bare ACK first)
  ackdata_retx ACK+PSH+data sent twice (a retransmission, still acking only the SYN-ACK)
  findata      FIN+ACK+PSH+data
  ooo          the second half of the request first (out of order), then the first half
  forged       ACK+PSH+data carrying a client-forged kind-254 option (port 1234, FORGED_ADDR)
then collects the RS's replies for a moment, acks them (from then on the client acks RS data:
no TOA any more) and ends with a RST. The caller drops the kernel's own RSTs for these ports.
Prints one line per connection:
  conn SPORT VARIANT synack=1 mss=N replied=N http=0|1
and a final "done". Never loops without bound: every wait has a timeout."""
import random
import socket
import struct
import sys
import time

from scapy.all import IP, TCP, AsyncSniffer, Ether, conf, sendp

conf.verb = 0
iface, vip_mac, vip, dport, first_sport, forged_addr = (
    sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]), int(sys.argv[5]), sys.argv[6])
VARIANTS = ["ackdata", "ackdata_retx", "findata", "ooo", "forged", "findata", "ackdata"]
L2 = Ether(dst=vip_mac)
TS_BASE = random.randint(1, 1 << 30)


def opts_syn():
    return [("MSS", 1460), ("SAckOK", b""), ("Timestamp", (TS_BASE, 0)), ("NOP", None), ("WScale", 7)]


def opts_data(tsecr):
    return [("NOP", None), ("NOP", None), ("Timestamp", (TS_BASE + 1, tsecr))]


def plen(p):
    """TCP payload length from the IP header (Ethernet padding is not payload)."""
    return p[IP].len - p[IP].ihl * 4 - p[TCP].dataofs * 4


def wait_for(got, pred, timeout):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        for p in list(got):
            if pred(p):
                return p
        time.sleep(0.02)
    return None


def one(sport, variant):
    res = {"synack": 0, "mss": 0, "replied": 0, "http": 0}
    got = []
    sn = AsyncSniffer(iface=iface, store=False, prn=got.append,
                      filter=f"tcp and src host {vip} and src port {dport} and dst port {sport}")
    sn.start()
    time.sleep(0.2)  # the sniffer's socket is open
    try:
        isn = random.randint(0, 0xFFFFFFFF)
        ip = IP(dst=vip, ttl=64)
        syn = ip / TCP(sport=sport, dport=dport, flags="S", seq=isn, window=64240, options=opts_syn())
        synack = None
        for _ in range(3):  # SYN retransmissions, bounded
            sendp(L2 / syn, iface=iface)
            synack = wait_for(got, lambda p: TCP in p and (p[TCP].flags & 0x12) == 0x12, 1.0)
            if synack is not None:
                break
        if synack is None:
            return res
        res["synack"] = 1
        for o in synack[TCP].options:
            if o[0] == "MSS":
                res["mss"] = o[1]
        rs_isn = synack[TCP].seq
        tsecr = 0
        for o in synack[TCP].options:
            if o[0] == "Timestamp":
                tsecr = o[1][0]
        seq = isn + 1
        ack = (rs_isn + 1) & 0xFFFFFFFF
        req = f"GET / HTTP/1.1\r\nHost: toa\r\nUser-Agent: toa-{variant}\r\nConnection: close\r\n\r\n".encode()

        def seg(flags, s, payload, options=None):
            return L2 / ip / TCP(sport=sport, dport=dport, flags=flags, seq=s & 0xFFFFFFFF, ack=ack,
                                 window=502, options=options if options is not None else opts_data(tsecr)) / payload

        end_seq = seq + len(req)
        if variant in ("ackdata", "ackdata_retx"):
            sendp(seg("PA", seq, req), iface=iface)
            if variant == "ackdata_retx":
                time.sleep(0.05)
                sendp(seg("PA", seq, req), iface=iface)
        elif variant == "findata":
            sendp(seg("FPA", seq, req), iface=iface)
            end_seq += 1
        elif variant == "ooo":
            half = len(req) // 2
            sendp(seg("PA", seq + half, req[half:]), iface=iface)
            time.sleep(0.05)
            sendp(seg("A", seq, req[:half]), iface=iface)
        elif variant == "forged":
            fake = (254, struct.pack("!H", 1234) + socket.inet_aton(forged_addr))
            sendp(seg("PA", seq, req, opts_data(tsecr) + [fake]), iface=iface)
        # Replies: data (and usually a FIN) from the RS; wait for some, bounded.
        wait_for(got, lambda p: TCP in p and plen(p) > 0, 1.5)
        time.sleep(0.2)
        top = ack
        body = b""
        for p in list(got):
            t = p[TCP]
            pl = bytes(t.payload)[:plen(p)]
            if t.flags & 0x02:
                continue
            if pl:
                res["replied"] += 1
                body += pl
            e = (t.seq + len(pl) + (1 if t.flags & 0x01 else 0)) & 0xFFFFFFFF
            if ((e - top) & 0xFFFFFFFF) < 0x80000000:
                top = e
        res["http"] = int(body.startswith(b"HTTP/1.1 200"))
        if top != ack:
            # The client acks RS data: from here on no packet may carry TOA.
            ack = top
            sendp(seg("A", end_seq, b""), iface=iface)
            time.sleep(0.05)
        sendp(L2 / ip / TCP(sport=sport, dport=dport, flags="R", seq=end_seq & 0xFFFFFFFF, window=0), iface=iface)
        return res
    finally:
        sn.stop()


for k, v in enumerate(VARIANTS):
    sp = first_sport + k
    r = one(sp, v)
    print(f"conn {sp} {v} synack={r['synack']} mss={r['mss']} replied={r['replied']} http={r['http']}", flush=True)
print("done", flush=True)
