"""Bounded UDP request/response client for the e2e tests.

udp_client.py HOST PORT COUNT SOCKETS TIMEOUT_S [SIZE]
HOST may be IPv4 or IPv6. SIZE pads every request to that many bytes (default: 7, unpadded; a
SIZE above the path MTU makes the client's kernel send it in fragments).
Sends COUNT datagrams spread over SOCKETS source ports (so the director sees several flows),
at most one outstanding per socket, waits up to 0.5 s per reply and TIMEOUT_S overall.
Prints: "sent N answered M" and then "rsX K" per answering server."""
import collections
import select
import socket
import sys
import time

host, port, count, nsock, timeout = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]), float(sys.argv[5])
size = int(sys.argv[6]) if len(sys.argv) > 6 else 0
family = socket.AF_INET6 if ":" in host else socket.AF_INET
socks = []
for _ in range(nsock):
    s = socket.socket(family, socket.SOCK_DGRAM)
    s.connect((host, port))
    s.setblocking(False)
    socks.append(s)

deadline = time.monotonic() + timeout
sent = answered = 0
by_rs = collections.Counter()
pending = {}  # socket -> (payload, sent_at)


def send(s):
    global sent
    payload = f"q{sent:06d}".encode()
    payload += b"p" * max(0, size - len(payload))
    try:
        s.send(payload)
    except OSError:
        pass
    pending[s] = (payload, time.monotonic())
    sent += 1


for s in socks:
    if sent < count:
        send(s)
while pending and time.monotonic() < deadline:
    ready, _, _ = select.select(list(pending), [], [], 0.05)
    now = time.monotonic()
    for s in ready:
        try:
            data = s.recv(65535)
        except OSError:
            continue
        payload, _ = pending[s]
        name, _, echoed = data.partition(b" ")
        if echoed == payload:
            answered += 1
            by_rs[name.decode()] += 1
            del pending[s]
            if sent < count:
                send(s)
    for s, (payload, at) in list(pending.items()):
        if now - at > 0.5:  # lost: give up on this one, send the next
            del pending[s]
            if sent < count:
                send(s)
print(f"sent {sent} answered {answered}")
for name, k in sorted(by_rs.items()):
    print(f"{name} {k}")
