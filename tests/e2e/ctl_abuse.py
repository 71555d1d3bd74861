"""Misbehaving control-socket clients for test_control_socket.sh (bounded in count and time).

ctl_abuse.py hold SOCKET N SECONDS READY_FILE
    Keeps N connections open that never send a byte; each one xvsd closes (idle timeout) is
    opened again at once, so N silent clients are connected all the time. Writes READY_FILE
    when the first N are connected. At the end prints
    "held N opened X closed_by_server Y timed_out_replies Z min_open M".
ctl_abuse.py send SOCKET BYTES
    Sends one request line of BYTES bytes (a JSON object padded with a long string), keeps
    writing until xvsd stops taking it, then prints xvsd's reply line (or "NO REPLY").
ctl_abuse.py raw SOCKET HEX
    Sends the bytes HEX (then '\\n') and prints the reply line; "pid N" (its own) on stderr."""
import os
import select
import socket
import sys
import time


def connect(path):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.connect(path)
    s.setblocking(False)
    return s


def hold(path, n, seconds, ready_file):
    conns = [connect(path) for _ in range(n)]
    with open(ready_file, "w") as f:
        f.write("ready\n")
    opened, closed, timed_out, min_open = n, 0, 0, n
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        readable, _, _ = select.select(conns, [], [], 0.05)
        for s in readable:
            try:
                data = s.recv(4096)
            except OSError:
                data = b""
            if data:  # the "Request timed out" reply; the EOF follows
                timed_out += data.count(b"Request timed out")
                continue
            closed += 1
            conns.remove(s)
            s.close()
            min_open = min(min_open, len(conns))
            conns.append(connect(path))
            opened += 1
    for s in conns:
        s.close()
    print(f"held {n} opened {opened} closed_by_server {closed} timed_out_replies {timed_out} min_open {min_open}")


def reply_of(s, timeout=5.0):
    s.settimeout(timeout)
    buf = b""
    try:
        while b"\n" not in buf:
            chunk = s.recv(65536)
            if not chunk:
                break
            buf += chunk
    except OSError:
        pass
    return buf.split(b"\n")[0].decode("utf-8", "replace") if buf else "NO REPLY"


def send(path, size):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.connect(path)
    head = b'{"cmd":"version","pad":"'
    line = head + b"a" * (size - len(head) - 3) + b'"}\n'
    sent = 0
    try:
        while sent < len(line):
            sent += s.send(line[sent:sent + 65536])
    except OSError:
        pass  # xvsd closed after answering: the reply is still readable
    print(f"sent {sent} of {len(line)}", file=sys.stderr)
    print(reply_of(s))


def raw(path, hexbytes):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.connect(path)
    print(f"pid {os.getpid()}", file=sys.stderr)  # what xvsd logs (SO_PEERCRED)
    s.sendall(bytes.fromhex(hexbytes) + b"\n")
    print(reply_of(s))


if __name__ == "__main__":
    cmd = sys.argv[1]
    if cmd == "hold":
        hold(sys.argv[2], int(sys.argv[3]), float(sys.argv[4]), sys.argv[5])
    elif cmd == "send":
        send(sys.argv[2], int(sys.argv[3]))
    elif cmd == "raw":
        raw(sys.argv[2], sys.argv[3])
    else:
        sys.exit(f"unknown command {cmd}")
