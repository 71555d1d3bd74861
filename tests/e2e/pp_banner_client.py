"""Clients that only listen (server speaks first), for the e2e PROXY protocol test.

pp_banner_client.py HOST PORT COUNT [PARALLEL=1]
Opens COUNT connections (PARALLEL at a time), sends nothing, reads one line (3 s limit each),
closes. Prints one line per connection: "ok LOCAL_PORT SECONDS" when the banner came, else
"fail LOCAL_PORT REASON". Bounded: every socket operation has a timeout."""
import socket
import sys
import time
from concurrent.futures import ThreadPoolExecutor

host, port, count = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
parallel = int(sys.argv[4]) if len(sys.argv) > 4 else 1


def one(_):
    t0 = time.monotonic()
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.settimeout(3)
    lport = 0
    try:
        s.connect((host, port))
        lport = s.getsockname()[1]
        buf = b""
        while not buf.endswith(b"\r\n"):
            chunk = s.recv(256)
            if not chunk:
                return f"fail {lport} eof_after_{len(buf)}_bytes"
            buf += chunk
        if buf != b"220 xvs-pp-banner\r\n":
            return f"fail {lport} banner_{buf!r}"
        return f"ok {lport} {time.monotonic() - t0:.2f}"
    except OSError as e:
        return f"fail {lport} {type(e).__name__}"
    finally:
        s.close()


with ThreadPoolExecutor(max_workers=parallel) as ex:
    for line in ex.map(one, range(count)):
        print(line, flush=True)
