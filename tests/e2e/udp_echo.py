"""UDP echo for the e2e tests: replies to every datagram with PREFIX + payload (PREFIX names
the RS, e.g. "rs1 "), so the client can tell which real server answered. ADDR: IPv4 or IPv6."""
import socket
import sys

addr, port, prefix = sys.argv[1], int(sys.argv[2]), sys.argv[3].encode()
s = socket.socket(socket.AF_INET6 if ":" in addr else socket.AF_INET, socket.SOCK_DGRAM)
s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 1 << 22)
s.bind((addr, port))
while True:
    data, peer = s.recvfrom(65535)
    s.sendto(prefix + data, peer)
