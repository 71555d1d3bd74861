"""TCP server for the e2e rs readers test: for each connection it logs the address accept()
returned and the one getpeername() returns once the first data has arrived, as
"accept ADDR:PORT peer ADDR:PORT" (flushed), then reads until EOF (2 s at most) and closes.
Serves connections one at a time. ADDR "::" makes a dual-stack socket (IPv4 peers read as
::ffff:a.b.c.d). Usage: peer_probe_server.py ADDR PORT LOG"""
import socket
import sys

addr, port, log = sys.argv[1], int(sys.argv[2]), sys.argv[3]
s = socket.socket(socket.AF_INET6 if ":" in addr else socket.AF_INET, socket.SOCK_STREAM)
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind((addr, port))
s.listen(16)
with open(log, "a", buffering=1) as out:
    while True:
        conn, accepted = s.accept()
        conn.settimeout(2.0)
        try:
            conn.recv(4096)
            peer = conn.getpeername()
            out.write("accept %s:%d peer %s:%d\n" % (accepted[:2] + peer[:2]))
            while conn.recv(4096):
                pass
        except OSError:
            pass
        conn.close()
