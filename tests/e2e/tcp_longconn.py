"""One long-lived TCP connection for the e2e reload test.

tcp_longconn.py HOST PORT DURATION_S
Connects once, sends a numbered line every 0.5 s for DURATION_S and checks each echo.
Prints one line per exchange ("ok N" or "ERR ...") as it goes, then "done ok=N err=M".
Exits 0 only if every exchange was echoed intact on the same connection."""
import socket
import sys
import time

host, port, duration = sys.argv[1], int(sys.argv[2]), float(sys.argv[3])
ok = err = 0
try:
    s = socket.create_connection((host, port), timeout=3)
    s.settimeout(3)
    print(f"connected from {s.getsockname()[0]}:{s.getsockname()[1]}", flush=True)
    f = s.makefile("rb")
    end = time.monotonic() + duration
    n = 0
    while time.monotonic() < end:
        line = f"line {n}\n".encode()
        try:
            s.sendall(line)
            back = f.readline()
        except OSError as e:
            back = repr(e).encode()
        if back == line:
            ok += 1
            print(f"ok {n}", flush=True)
        else:
            err += 1
            print(f"ERR {n} {back!r}", flush=True)
            if not back:
                break
        n += 1
        time.sleep(0.5)
except OSError as e:
    err += 1
    print(f"ERR connect {e!r}", flush=True)
print(f"done ok={ok} err={err}", flush=True)
sys.exit(0 if err == 0 and ok > 0 else 1)
