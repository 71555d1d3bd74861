"""NatTun e2e client: sends COUNT datagrams ("n<i>") from one socket to VIP:PORT, each waiting
for its answer (1 s, up to 3 tries), and checks every answer came from VIP:PORT (recvfrom) and
echoes the request. Prints "ok <answered> <wrong_source>" and exits 0 when all were answered
from the VIP. Usage: nattun_udp_client.py VIP PORT COUNT"""
import socket
import sys

vip, port, count = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.settimeout(1.0)
answered = wrong = 0
for i in range(count):
    msg = b"n%d" % i
    for _ in range(3):
        s.sendto(msg, (vip, port))
        try:
            while True:
                data, peer = s.recvfrom(2048)
                if peer != (vip, port):
                    wrong += 1
                    continue
                if data.endswith(b" " + msg):
                    answered += 1
                    break
        except socket.timeout:
            continue
        break
print("ok %d %d" % (answered, wrong))
sys.exit(0 if answered == count and wrong == 0 else 1)
