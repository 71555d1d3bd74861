"""Checks the client->RS byte streams in a capture taken on a real server (e2e PROXY test).

pp_stream_check.py PCAP RS_ADDR CLIENT_ADDR VIP PORT_MAP
PORT_MAP is "RS_PORT:VERSION:VIP_PORT,..." (e.g. "8081:v1:80,8082:v2:81"). For every connection
to those RS ports it reassembles what the client side sent (by sequence number, from the SYN)
and checks: the stream starts with exactly one PROXY header of that version naming CLIENT_ADDR,
VIP and VIP_PORT, followed by an HTTP request ("GET " or "POST "); a POST's body follows its
head exactly (Content-Length bytes starting "pp-body-"), and its request line and the body's
start travel in one segment (the first data segment the client sent). Prints per connection
"conn VERSION CLIENT_PORT METHOD header_segment|inserted", per version
"SUM VERSION conns=N ok=N header_segment=N inserted=N posts=N post_one_segment=N", and
"problem: ..." lines; exits 1 when there is a problem. Plain pcap parsing, no scapy needed."""
import re
import socket
import struct
import sys

V2_SIG = b"\r\n\r\n\x00\r\nQUIT\n"
pcap, rs_addr, client_addr, vip, port_map = sys.argv[1:6]
ports = {}
for item in port_map.split(","):
    rp, ver, vp = item.split(":")
    ports[int(rp)] = (ver, int(vp))

flows = {}  # (lip, lport, rs_port) -> {"isn": int|None, "segs": [(seq, payload)]}
with open(pcap, "rb") as f:
    gh = f.read(24)
    magic = struct.unpack("<I", gh[:4])[0]
    endian = "<" if magic in (0xA1B2C3D4, 0xA1B23C4D) else ">"
    while True:
        rh = f.read(16)
        if len(rh) < 16:
            break
        _, _, incl, _ = struct.unpack(endian + "IIII", rh)
        frame = f.read(incl)
        if len(frame) < 34 or frame[12:14] != b"\x08\x00":
            continue
        ip = frame[14:]
        ihl = (ip[0] & 0x0F) * 4
        total = struct.unpack("!H", ip[2:4])[0]
        if ip[9] != 6:
            continue
        src, dst = socket.inet_ntoa(ip[12:16]), socket.inet_ntoa(ip[16:20])
        tcp = ip[ihl:]
        sport, dport, seq = struct.unpack("!HHI", tcp[:8])
        if dst != rs_addr or dport not in ports:
            continue
        thl = (tcp[12] >> 4) * 4
        flags = tcp[13]
        payload_len = total - ihl - thl
        payload = tcp[thl:thl + payload_len]
        if len(payload) < payload_len:
            print(f"problem: snaplen cut a segment of {src}:{sport} ({len(payload)} of {payload_len} bytes)")
        fl = flows.setdefault((src, sport, dport), {"isn": None, "segs": []})
        if flags & 0x02:
            fl["isn"] = seq
            fl["segs"] = []  # a reused 4-tuple starts a new connection
        elif payload:
            fl["segs"].append((seq, payload))


def expected_header(ver, cport, vport):
    if ver == "v1":
        return f"PROXY TCP4 {client_addr} {vip} {cport} {vport}\r\n".encode()
    return (V2_SIG + bytes([0x21, 0x11, 0, 12]) + socket.inet_aton(client_addr) + socket.inet_aton(vip)
            + struct.pack("!HH", cport, vport))


problems = []
sums = {}
for (lip, lport, rport), fl in sorted(flows.items()):
    ver, vport = ports[rport]
    s = sums.setdefault(ver, dict(conns=0, ok=0, header_segment=0, inserted=0, posts=0, post_one_segment=0))
    s["conns"] += 1
    name = f"{ver} {lip}:{lport}"
    if fl["isn"] is None or not fl["segs"]:
        problems.append(f"{name}: no SYN or no data captured")
        continue
    base = (fl["isn"] + 1) & 0xFFFFFFFF
    stream = bytearray()
    for seq, pl in sorted(fl["segs"], key=lambda x: (x[0] - base) & 0xFFFFFFFF):
        off = (seq - base) & 0xFFFFFFFF
        if off > len(stream):
            break  # a hole: stop at the contiguous prefix
        stream[off:off + len(pl)] = pl
    stream = bytes(stream)
    first = min(fl["segs"], key=lambda x: (x[0] - base) & 0xFFFFFFFF)
    # The client port is in the header itself: parse it, then compare byte for byte.
    if ver == "v1":
        end = stream.find(b"\r\n")
        parts = stream[:end].decode("ascii", "replace").split(" ") if end > 0 else []
        cport = int(parts[4]) if len(parts) == 6 and parts[4].isdigit() else -1
    else:
        cport = struct.unpack("!H", stream[24:26])[0] if len(stream) >= 28 else -1
    hdr = expected_header(ver, max(cport, 0), vport)
    if not stream.startswith(hdr):
        problems.append(f"{name}: stream does not start with the expected {ver} header: {stream[:64]!r}")
        continue
    rest = stream[len(hdr):]
    method = "GET" if rest.startswith(b"GET ") else "POST" if rest.startswith(b"POST ") else None
    if method is None:
        problems.append(f"{name}: no HTTP request right after the header: {rest[:32]!r}")
        continue
    if rest.find(b"PROXY ") >= 0 or rest.find(V2_SIG) >= 0:
        problems.append(f"{name}: a second PROXY header in the stream")
        continue
    if method == "POST":
        # The whole body, byte-exact, right after the request head: a client segment placed at
        # the wrong RS seq (unshifted) would overwrite or drop bytes here.
        head_end = rest.find(b"\r\n\r\n")
        m = re.search(rb"(?i)\r\ncontent-length: *([0-9]+)", rest[:head_end]) if head_end > 0 else None
        body = rest[head_end + 4:] if head_end > 0 else b""
        if not m or len(body) != int(m.group(1)) or not body.startswith(b"pp-body-"):
            problems.append(f"{name}: POST body in the RS stream is not its Content-Length bytes: {rest[-48:]!r}")
            continue
    kind = "header_segment" if first[1] == hdr else "inserted" if first[1].startswith(hdr) else None
    if kind is None:
        problems.append(f"{name}: first data segment is neither the header nor header+data: {first[1][:48]!r}")
        continue
    s[kind] += 1
    if method == "POST":
        s["posts"] += 1
        # The request's first segment: the inserted one, or the one right after the header.
        req_seg = first[1][len(hdr):] if kind == "inserted" else next(
            (pl for seq, pl in fl["segs"] if (seq - base) & 0xFFFFFFFF == len(hdr)), b"")
        body_at = req_seg.find(b"\r\n\r\n")
        if req_seg.startswith(b"POST ") and body_at > 0 and b"pp-body-" in req_seg[body_at:]:
            s["post_one_segment"] += 1
        else:
            problems.append(f"{name}: POST body not in the request's first segment: {req_seg[:64]!r}")
            continue
    s["ok"] += 1
    print(f"conn {ver} {cport} {method} {kind}")

for ver, s in sorted(sums.items()):
    print(f"SUM {ver} " + " ".join(f"{k}={v}" for k, v in s.items()))
for p in problems[:20]:
    print(f"problem: {p}")
if len(problems) > 20:
    print(f"problem: ... and {len(problems) - 20} more")
sys.exit(1 if problems else 0)
