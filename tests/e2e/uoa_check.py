"""Checks UOA on the wire at the real server (e2e UOA test).

uoa_check.py PCAP RS_IP CLIENT_IP TRAIL FLOW...   FLOW = LABEL:CPORT:MODE:COUNT:BIG
PCAP: the RS's capture of UDP and IP protocol 248. Client datagrams carry "LABEL SEQ" as
payload; the RS sees each flow from one local port. Rules checked per flow:
  - every datagram SEQ 1..COUNT arrives, in order, from one local address and port;
  - datagrams 1..TRAIL carry UOA in the flow's MODE (ipo: IPv4 option 31 len 8 right after the
    fixed header; opp: IP protocol 248, header {0x10, 17, 12} and the same option, then UDP),
    with CLIENT_IP and the flow's client port CPORT; later ones carry none;
  - BIG flows: the first datagram (a full 1500 bytes) carries none and is preceded by an empty
    UDP datagram from the same local port carrying UOA;
  - IP header and UDP checksums are right (UDP over the pseudo-header with protocol 17, as the
    RS's UOA module sees it once the opp header is gone).
Prints "problem: ..." lines and a summary, exits 1 if there is any problem."""
import socket
import struct
import sys

from scapy.all import rdpcap

pcap, rs_ip, client_ip, trail = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
flows = {}
for spec in sys.argv[5:]:
    label, cport, mode, count, big = spec.split(":")
    flows[label] = (int(cport), mode, int(count), big == "1")
rs_b = socket.inet_aton(rs_ip)
client_b = socket.inet_aton(client_ip)
problems = []


def csum(data):
    if len(data) % 2:
        data += b"\0"
    s = sum(struct.unpack(f"!{len(data) // 2}H", data))
    while s >> 16:
        s = (s & 0xFFFF) + (s >> 16)
    return s


def parse(raw):
    """(mode or None, uoa (port, addr) or None, lip, lport, payload, problem)."""
    ihl = (raw[0] & 0x0F) * 4
    total = struct.unpack("!H", raw[2:4])[0]
    if len(raw) < total:
        return None, None, None, None, None, "truncated capture"
    raw = raw[:total]
    if csum(raw[:ihl]) != 0xFFFF:
        return None, None, None, None, None, "bad IP header checksum"
    proto = raw[9]
    mode = uoa = None
    udp_at = ihl
    if proto == 248:
        mode = "opp"
        hdr = raw[ihl:ihl + 12]
        if hdr[0] != 0x10 or hdr[1] != 17 or struct.unpack("!H", hdr[2:4])[0] != 12:
            return None, None, None, None, None, f"bad opp header {hdr.hex()}"
        opt = hdr[4:12]
        udp_at = ihl + 12
    elif proto == 17 and ihl > 20:
        opt = raw[20:28]
        if opt[0] == 31:
            mode = "ipo"
    if mode:
        if opt[0] != 31 or opt[1] != 8:
            return None, None, None, None, None, f"bad UOA option {opt.hex()}"
        uoa = (struct.unpack("!H", opt[2:4])[0], opt[4:8])
    udp = raw[udp_at:]
    ulen = struct.unpack("!H", udp[4:6])[0]
    if ulen != len(udp):
        return None, None, None, None, None, f"UDP length {ulen} != {len(udp)}"
    if struct.unpack("!H", udp[6:8])[0] != 0:
        pseudo = raw[12:20] + struct.pack("!BBH", 0, 17, ulen)
        if csum(pseudo + udp) != 0xFFFF:
            return None, None, None, None, None, "bad UDP checksum"
    return mode, uoa, raw[12:16], struct.unpack("!H", udp[0:2])[0], udp[8:], None


events = {}  # (lip, lport) -> [(label or "", seq or 0, mode, uoa)]
for pkt in rdpcap(pcap):
    raw = bytes(pkt)
    if len(raw) < 34 or raw[12:14] != b"\x08\x00":
        continue
    ip = raw[14:]
    if ip[16:20] != rs_b or ip[9] not in (17, 248):
        continue
    mode, uoa, lip, lport, payload, err = parse(ip)
    if err:
        problems.append(f"packet to RS: {err}")
        continue
    words = payload.split()
    label = words[0].decode() if words else ""
    seq = int(words[1]) if len(words) > 1 else 0
    events.setdefault((lip, lport), []).append((label, seq, mode, uoa))

summary = []
for label, (cport, mode, count, big) in flows.items():
    keys = [k for k, ev in events.items() if any(e[0] == label for e in ev)]
    if len(keys) != 1:
        problems.append(f"flow {label}: seen from {len(keys)} local address/ports, expected 1")
        continue
    ev = events[keys[0]]
    data = [e for e in ev if e[0] == label]
    seqs = [e[1] for e in data]
    if seqs != list(range(1, count + 1)):
        problems.append(f"flow {label}: datagrams {seqs}, expected 1..{count} in order")
    with_uoa = 0
    for _, seq, m, uoa in data:
        want = seq <= trail and not (big and seq == 1)
        if want and m != mode:
            problems.append(f"flow {label} #{seq}: UOA {m or 'none'}, expected {mode}")
        elif not want and m:
            problems.append(f"flow {label} #{seq}: UOA {m} present, expected none")
        if m:
            with_uoa += 1
            if uoa != (cport, client_b):
                problems.append(f"flow {label} #{seq}: UOA {uoa[0]} {socket.inet_ntoa(uoa[1])}, "
                                f"expected {cport} {client_ip}")
    empties = [i for i, e in enumerate(ev) if e[0] == "" and e[1] == 0]
    if big:
        first = next((i for i, e in enumerate(ev) if e[0] == label and e[1] == 1), None)
        if first is None or first == 0 or ev[first - 1][0] != "":
            problems.append(f"flow {label}: no empty datagram right before the full-size first one")
        else:
            e = ev[first - 1]
            if e[2] != mode or e[3] != (cport, client_b):
                problems.append(f"flow {label}: empty datagram UOA {e[2]} {e[3]}, expected {mode}")
        if len(empties) != 1:
            problems.append(f"flow {label}: {len(empties)} empty datagrams, expected 1")
    elif empties:
        problems.append(f"flow {label}: {len(empties)} unexpected empty datagrams")
    summary.append(f"{label}:{mode}:{with_uoa}/{len(data)}+{len(empties)}empty")

for p in problems:
    print(f"problem: {p}")
print("FLOWS " + " ".join(summary) + f" problems {len(problems)}")
sys.exit(1 if problems else 0)
