"""UDP echo that logs the peer address of every datagram (one "addr:port" line per datagram,
flushed) to LOG, and answers PREFIX + payload: the NatTun test checks that a real server's plain
recvfrom() sees the real client. ADDR may be IPv6 ("::" makes a dual-stack socket, whose IPv4
peers read as ::ffff:a.b.c.d). Usage: udp_peer_log.py ADDR PORT PREFIX LOG"""
import socket
import sys

addr, port, prefix, log = sys.argv[1], int(sys.argv[2]), sys.argv[3].encode(), sys.argv[4]
s = socket.socket(socket.AF_INET6 if ":" in addr else socket.AF_INET, socket.SOCK_DGRAM)
s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 1 << 22)
s.bind((addr, port))
with open(log, "a", buffering=1) as out:
    while True:
        data, peer = s.recvfrom(65535)
        out.write("%s:%d\n" % peer[:2])
        s.sendto(prefix + data, peer)
