"""Server-speaks-first TCP server for the e2e PROXY protocol test (runs on a real server).

pp_banner_server.py HOST PORT RECORD_FILE
On every accepted connection it first reads the PROXY protocol header (v1 text or v2 binary,
parsed here), then writes a one-line banner, and appends one line to RECORD_FILE:
  ok v1|v2 SRC_ADDR SRC_PORT DST_ADDR DST_PORT PEER_ADDR
or "bad REASON PEER_ADDR" when no valid header arrived within 5 s (the banner is then withheld,
so the client notices too). It must read before it writes: xvs sends the header as its own
segment right after the handshake when the client sends nothing. Threads, one per connection;
runs until killed (the test's cleanup does that)."""
import socket
import struct
import sys
import threading

V2_SIG = b"\r\n\r\n\x00\r\nQUIT\n"
host, port, record = sys.argv[1], int(sys.argv[2]), sys.argv[3]
lock = threading.Lock()


def read_exact(conn, n):
    buf = b""
    while len(buf) < n:
        chunk = conn.recv(n - len(buf))
        if not chunk:
            raise ValueError(f"eof after {len(buf)} of {n} bytes")
        buf += chunk
    return buf


def read_header(conn):
    """Reads exactly the PROXY header (never a byte more) and returns (version, src, sport, dst, dport)."""
    first = read_exact(conn, 6)
    if first == b"PROXY ":
        line = first
        while not line.endswith(b"\r\n"):  # v1: at most 107 bytes including CRLF
            if len(line) >= 107:
                raise ValueError("v1 line longer than 107 bytes")
            line += read_exact(conn, 1)
        parts = line[:-2].decode("ascii").split(" ")
        if len(parts) != 6 or parts[1] != "TCP4":
            raise ValueError(f"v1 line {line!r}")
        return "v1", parts[2], int(parts[4]), parts[3], int(parts[5])
    rest = read_exact(conn, 16 - 6)
    hdr = first + rest
    if hdr[:12] != V2_SIG:
        raise ValueError(f"no PROXY signature: {hdr!r}")
    ver_cmd, fam, length = hdr[12], hdr[13], struct.unpack("!H", hdr[14:16])[0]
    body = read_exact(conn, length)
    if ver_cmd != 0x21 or fam != 0x11 or length < 12:
        raise ValueError(f"v2 ver/cmd {ver_cmd:#x} family {fam:#x} length {length}")
    src, dst = socket.inet_ntoa(body[0:4]), socket.inet_ntoa(body[4:8])
    sport, dport = struct.unpack("!HH", body[8:12])
    return "v2", src, sport, dst, dport


def serve(conn, peer):
    conn.settimeout(5)
    try:
        try:
            version, src, sport, dst, dport = read_header(conn)
        except (ValueError, OSError, UnicodeDecodeError) as e:
            line = f"bad {str(e).replace(' ', '_')[:80]} {peer[0]}"
        else:
            conn.sendall(b"220 xvs-pp-banner\r\n")
            line = f"ok {version} {src} {sport} {dst} {dport} {peer[0]}"
            try:  # the client closes after the banner
                while conn.recv(4096):
                    pass
            except OSError:
                pass
        with lock, open(record, "a") as f:
            f.write(line + "\n")
    finally:
        conn.close()


srv = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
srv.bind((host, port))
srv.listen(128)
while True:
    c, a = srv.accept()
    threading.Thread(target=serve, args=(c, a), daemon=True).start()
