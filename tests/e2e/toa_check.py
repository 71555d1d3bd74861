"""Checks the TOA option on the wire at the real server (e2e TOA test).

toa_check.py PCAP RS_IP RS_PORT CLIENT_IP PORTS_FILE FORGED_ADDR
PCAP: the RS's capture of tcp port RS_PORT. PORTS_FILE: the client's real source ports, one a
line (curl and scripted connections). A connection is a (local address, local port) seen at the
RS, split when a new SYN (another ISN) reuses the pair. Rules checked:
  - no SYN and no RST carries a kind-254 option;
  - a client->RS packet carries TOA iff it acks the RS SYN-ACK and nothing more
    (ACK set, ack == RS ISN + 1): the handshake-completing packet whatever it is (bare ACK,
    ACK+data, FIN+ACK+data, out of order, retransmission) has it, packets acking RS data do not;
  - TOA is the first option, kind 254 length 8, exactly once in the packet, address CLIENT_IP,
    port one of the client's real source ports, the same for every packet of a connection;
  - FORGED_ADDR (a client-forged 254 option) appears in no packet's options;
  - client->RS IP and TCP checksums are right (the RS would drop a bad one silently);
  - the TOA ports over all connections are exactly the client's ports, one connection for
    each time the client used the port (its kernel may reuse one).
Prints counts, "problem: ..." lines, and exits 1 if there is any problem."""
import re
import socket
import struct
import sys
from collections import Counter

from scapy.all import IP, TCP, rdpcap

pcap, rs_ip, rs_port, client_ip, ports_file, forged = sys.argv[1:7]
rs_port = int(rs_port)
forged_b = socket.inet_aton(forged)
client_b = socket.inet_aton(client_ip)
want_ports = sorted(int(x) for x in open(ports_file).read().split())

problems = []  # (category, message)
PER_CATEGORY = 4


def problem(msg):
    """Category: the message without the packet/connection and its numbers."""
    cat = re.sub(r"[0-9a-f]{8,}|\d+", "#", msg.split(": ", 1)[-1])
    problems.append((cat, msg))


def parse_opts(raw):
    """[(kind, offset, bytes)] of the TCP options in raw (the bytes after the fixed header);
    None if malformed."""
    out = []
    i = 0
    while i < len(raw):
        k = raw[i]
        if k == 0:
            out.append((0, i, raw[i:i + 1]))
            break
        if k == 1:
            out.append((1, i, raw[i:i + 1]))
            i += 1
            continue
        if i + 1 >= len(raw) or raw[i + 1] < 2 or i + raw[i + 1] > len(raw):
            return None
        out.append((k, i, raw[i:i + raw[i + 1]]))
        i += raw[i + 1]
    return out


class ConnAtRs:
    def __init__(self, key, syn_seq):
        self.key = key
        self.syn_seq = syn_seq
        self.rs_isn = None
        self.synack_mss = None
        self.toa_ports = set()
        self.first_after_synack = None  # description of the first client packet after the SYN-ACK
        self.toa_pkts = 0
        self.kinds = Counter()


conns = {}  # key -> current ConnAtRs
all_conns = []
stats = Counter()

pkts = rdpcap(pcap)
for n, p in enumerate(pkts, 1):
    if IP not in p or TCP not in p:
        continue
    ip, t = p[IP], p[TCP]
    raw_tcp = bytes(ip)[ip.ihl * 4:]
    doff = raw_tcp[12] >> 4
    opts_raw = raw_tcp[20:doff * 4]
    payload_len = ip.len - ip.ihl * 4 - doff * 4
    flags = int(t.flags)
    syn, ack_f, rst, fin = flags & 0x02, flags & 0x10, flags & 0x04, flags & 0x01
    to_rs = ip.dst == rs_ip and t.dport == rs_port
    from_rs = ip.src == rs_ip and t.sport == rs_port
    if not (to_rs or from_rs):
        continue
    stats["packets"] += 1
    key = (ip.src, t.sport) if to_rs else (ip.dst, t.dport)
    opts = parse_opts(opts_raw)
    where = f"pkt #{n} {ip.src}:{t.sport} > {ip.dst}:{t.dport} flags={t.flags} seq={t.seq} ack={t.ack} len={payload_len}"
    if forged_b in opts_raw:
        problem(f"{where}: forged address {forged} present in the TCP options ({opts_raw.hex()})")
    if opts is None:
        if to_rs:
            problem(f"{where}: malformed TCP options {opts_raw.hex()}")
        continue
    toa_idx = [i for i, o in enumerate(opts) if o[0] == 254]
    if to_rs and len(bytes(ip)) >= ip.len:
        # The RS drops a segment with a bad checksum silently (a bare third ACK would not even
        # be missed): recompute both over the bytes as captured.
        fixed = IP(bytes(ip)[:ip.len])
        del fixed.chksum
        del fixed[TCP].chksum
        fixed = IP(bytes(fixed))
        if fixed.chksum != ip.chksum or fixed[TCP].chksum != t.chksum:
            problem(f"{where}: bad checksum (IP {ip.chksum:#06x} expected {fixed.chksum:#06x}, "
                    f"TCP {t.chksum:#06x} expected {fixed[TCP].chksum:#06x})")
        stats["checksums"] += 1
    if from_rs:
        if toa_idx:
            problem(f"{where}: RS->client packet carries a 254 option")
        c = conns.get(key)
        if syn and ack_f and c is not None:
            c.rs_isn = t.seq
            for o in opts:
                if o[0] == 2 and len(o[2]) == 4:
                    c.synack_mss = struct.unpack("!H", o[2][2:4])[0]
        continue
    # client -> RS
    if syn:
        stats["syn"] += 1
        c = conns.get(key)
        if c is None or c.syn_seq != t.seq:
            c = ConnAtRs(key, t.seq)
            conns[key] = c
            all_conns.append(c)
        if toa_idx:
            problem(f"{where}: SYN carries a 254 option")
        continue
    c = conns.get(key)
    if c is None:
        stats["no_syn_seen"] += 1
        if toa_idx:
            problem(f"{where}: packet of a connection whose SYN was not captured carries 254")
        continue
    if c.rs_isn is None:
        problem(f"{where}: client packet before any RS SYN-ACK")
        continue
    qualifies = bool(ack_f) and not rst and t.ack == ((c.rs_isn + 1) & 0xFFFFFFFF)
    kind = ("RST" if rst else "FIN+ACK+data" if fin and payload_len else "FIN+ACK" if fin
            else "ACK+data" if payload_len else "ACK")
    if c.first_after_synack is None and ack_f:
        c.first_after_synack = (kind, bool(toa_idx), n)
    if len(toa_idx) > 1:
        problem(f"{where}: {len(toa_idx)} kind-254 options")
    if toa_idx and toa_idx[0] != 0:
        problem(f"{where}: kind-254 option is option #{toa_idx[0] + 1}, not the first ({opts_raw.hex()})")
    if rst and toa_idx:
        problem(f"{where}: RST carries a 254 option")
    if qualifies:
        stats["qualifying"] += 1
        c.kinds[kind] += 1
        if not toa_idx:
            problem(f"{where}: acks the RS SYN-ACK (ack == RS ISN+1) but has no TOA; options {opts_raw.hex() or '-'}")
            continue
        o = opts[toa_idx[0]][2]
        if len(o) != 8:
            problem(f"{where}: 254 option of length {len(o)}, expected 8")
            continue
        port = struct.unpack("!H", o[2:4])[0]
        addr = socket.inet_ntoa(o[4:8])
        if o[4:8] != client_b:
            problem(f"{where}: TOA address {addr}, expected {client_ip}")
        c.toa_ports.add(port)
        c.toa_pkts += 1
        stats["toa"] += 1
        stats["toa " + kind] += 1
    else:
        stats["not_qualifying"] += 1
        if toa_idx and not rst:
            problem(f"{where}: carries 254 but does not ack exactly the RS SYN-ACK "
                    f"(RS ISN+1 = {(c.rs_isn + 1) & 0xFFFFFFFF})")

# Per connection.
seen_ports = Counter()
first_kinds = Counter()
mss = Counter()
for c in all_conns:
    name = f"conn {c.key[0]}:{c.key[1]} (client ISN {c.syn_seq})"
    mss[c.synack_mss] += 1
    if c.rs_isn is None:
        problem(f"{name}: no RS SYN-ACK captured")
        continue
    if c.first_after_synack is None:
        problem(f"{name}: no client packet acked the RS SYN-ACK")
        continue
    kind, had_toa, n = c.first_after_synack
    first_kinds[kind] += 1
    if not had_toa:
        problem(f"{name}: first packet after the SYN-ACK (#{n}, {kind}) has no TOA")
    if len(c.toa_ports) > 1:
        problem(f"{name}: TOA ports differ within the connection: {sorted(c.toa_ports)}")
    for port in c.toa_ports:
        seen_ports[port] += 1

# As multisets: the client's kernel may hand out a port again (tcp_tw_reuse=1 reuses one whose
# TIME_WAIT is older than a second, which happens when the requests are slow on a loaded
# machine); then that port is in PORTS_FILE twice and must be in the TOA of two connections.
want_count = Counter(want_ports)
if set(seen_ports) != set(want_count):
    missing = sorted(set(want_count) - set(seen_ports))
    extra = sorted(set(seen_ports) - set(want_count))
    problem(f"TOA ports differ from the client's ports: missing {missing[:20]}, unexpected {extra[:20]}")
dups = [p for p, k in seen_ports.items() if k > want_count[p]]
if dups:
    problem(f"client ports in the TOA of more connections than the client made from them: {dups}")
short = [p for p, k in want_count.items() if 0 < seen_ports[p] < k]
if short:
    problem(f"client ports in the TOA of fewer connections than the client made from them: {short}")

print(f"packets {stats['packets']}, connections at the RS {len(all_conns)}, client SYNs {stats['syn']}")
print(f"RS SYN-ACK MSS (as the RS sent it): {dict(mss)}")
print(f"first client packet after the SYN-ACK: {dict(first_kinds)}")
print(f"client packets acking exactly the SYN-ACK {stats['qualifying']}, with TOA {stats['toa']} "
      f"({', '.join(f'{k[4:]} {v}' for k, v in sorted(stats.items()) if k.startswith('toa '))}); "
      f"other client packets {stats['not_qualifying']}")
print(f"client->RS checksums verified {stats['checksums']}")
print(f"distinct TOA ports {len(seen_ports)}, client ports {len(want_ports)}")
print(f"CONNS {len(all_conns)} TOA {stats['toa']} PROBLEMS {len(problems)}")
shown = Counter()
for cat, m in problems:
    shown[cat] += 1
    if shown[cat] <= PER_CATEGORY:
        print("problem:", m)
for cat, k in shown.items():
    if k > PER_CATEGORY:
        print(f"problem: ... {k - PER_CATEGORY} more like: {cat}")
sys.exit(1 if problems else 0)
