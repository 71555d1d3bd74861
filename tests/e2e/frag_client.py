#!/usr/bin/python3
"""Sends one UDP datagram to HOST:PORT as IPv4 fragments (or whole) and waits for an answer.

  frag_client.py IFACE SRC HOST PORT SIZE FRAGSIZE WAIT_S
FRAGSIZE 0 sends the datagram unfragmented. Binds SRC:sport first so the client kernel takes
any reply (instead of answering port unreachable). Prints "answered N" (bytes) or
"answered 0". Sends only to HOST, an address inside the test's namespaces.
"""
import select
import socket
import sys

from scapy.all import IP, UDP, Ether, conf, fragment, getmacbyip, sendp

iface, src, host, port, size, fragsize, wait = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]), \
    int(sys.argv[5]), int(sys.argv[6]), float(sys.argv[7])
conf.verb = 0
sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
sock.bind((src, 0))
sport = sock.getsockname()[1]
pkt = IP(src=src, dst=host, id=sport) / UDP(sport=sport, dport=port) / (b"f" * size)
gw_mac = getmacbyip(host)
frames = [Ether(dst=gw_mac) / f for f in (fragment(pkt, fragsize=fragsize) if fragsize else [pkt])]
sendp(frames, iface=iface)
ready, _, _ = select.select([sock], [], [], wait)
print("fragments %d answered %d" % (len(frames), len(sock.recv(65535)) if ready else 0))
