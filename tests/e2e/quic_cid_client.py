"""QUIC-shaped datagrams for the conhash hash-target-qid e2e check (no QUIC stack needed: the
director reads only the invariant header, RFC 8999).

quic_cid_client.py VIP PORT COUNT FIRST_SRC OTHER_SRC...
For k in 0..COUNT-1: an Initial-shaped long header (version 1, an 8-byte DCID made from k)
from FIRST_SRC on a fresh source port, then a short header with the same DCID from the next
OTHER_SRC (round robin), each on a fresh port, so every datagram is a new flow for the
director. Each is answered by the udp_echo server of the RS it reached ("rsN ...").
Prints one line per k: "k RS_OF_INITIAL RS_OF_SHORT" ("none" when no reply in 1 s)."""
import socket
import sys

vip, port, count, first, others = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4], sys.argv[5:]


def ask(src, payload):
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.bind((src, 0))
    s.settimeout(1.0)
    try:
        s.sendto(payload, (vip, port))
        data, _ = s.recvfrom(2048)
        return data.split(b" ", 1)[0].decode()
    except OSError:
        return "none"
    finally:
        s.close()


for k in range(count):
    dcid = bytes([0xc1, 0xd0, (k >> 8) & 0xff, k & 0xff, 0x11, 0x22, 0x33, 0x44])
    initial = bytes([0xc3, 0, 0, 0, 1, len(dcid)]) + dcid + bytes([4, 0xaa, 0xbb, 0xcc, 0xdd]) + b"i" * 40
    short = bytes([0x43]) + dcid + b"s" * 40
    a = ask(first, initial)
    b = ask(others[k % len(others)], short)
    print(k, a, b, flush=True)
