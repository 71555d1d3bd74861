"""Scripted UDP flows for the e2e UOA test, bounded in count and time.

uoa_client.py VIP COUNT FLOW...   FLOW = LABEL:SPORT:DPORT:BIG  (BIG 1 = the first datagram is
1472 bytes of payload, a full 1500-byte IP datagram)
Each flow sends COUNT datagrams from its own source port, 30 ms apart, payload
"LABEL SEQ" (padded for the big one), then all replies are collected for 1.5 s.
Prints one line per flow: "flow LABEL answered SEQ,SEQ,..." (the sequence numbers echoed)."""
import select
import socket
import sys
import time

vip, count = sys.argv[1], int(sys.argv[2])
flows = []
for spec in sys.argv[3:]:
    label, sport, dport, big = spec.split(":")
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.bind(("0.0.0.0", int(sport)))
    s.connect((vip, int(dport)))
    s.setblocking(False)
    flows.append((label, s, big == "1"))

for seq in range(1, count + 1):
    for label, s, big in flows:
        payload = f"{label} {seq} ".encode()
        if big and seq == 1:
            payload = payload.ljust(1472, b"b")
        s.send(payload)
    time.sleep(0.03)

answered = {label: [] for label, _, _ in flows}
by_sock = {s: label for label, s, _ in flows}
deadline = time.monotonic() + 1.5
while time.monotonic() < deadline:
    ready, _, _ = select.select(list(by_sock), [], [], 0.1)
    for s in ready:
        try:
            data = s.recv(65535)
        except OSError:
            continue  # ICMP errors surface as socket errors; not a reply
        parts = data.split()
        if len(parts) >= 3:  # "rs1 LABEL SEQ"
            answered[by_sock[s]].append(int(parts[2]))
for label, seqs in answered.items():
    print(f"flow {label} answered {','.join(str(x) for x in sorted(seqs)) or '-'}")
