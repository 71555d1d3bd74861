"""Upload sink for the e2e bulk test: replies to POST with the sha256 (hex) and length of the
body it received, so the test can compare with what the client sent. Loopback only."""
import hashlib
import http.server
import sys


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def do_POST(self):
        h = hashlib.sha256()
        got = 0
        if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
            while True:
                size = int(self.rfile.readline().split(b";")[0], 16)
                if size == 0:
                    self.rfile.readline()
                    break
                while size:
                    chunk = self.rfile.read(min(size, 1 << 16))
                    h.update(chunk)
                    got += len(chunk)
                    size -= len(chunk)
                self.rfile.readline()
        else:
            left = int(self.headers.get("Content-Length", "0"))
            while left:
                chunk = self.rfile.read(min(left, 1 << 16))
                if not chunk:
                    break
                h.update(chunk)
                got += len(chunk)
                left -= len(chunk)
        body = f"{h.hexdigest()} {got}\n".encode()
        self.send_response(200)
        self.send_header("Content-Type", "text/plain")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


http.server.ThreadingHTTPServer((sys.argv[1], int(sys.argv[2])), Handler).serve_forever()
