#!/usr/bin/python3
"""Frames an attacker on the client link sends to the director (test_security.sh).

  arp_attack.py IFACE hijack RS_IP VIP COUNT INTERVAL_S  forged ARP requests and replies
                                                          claiming RS_IP (an RS address on
                                                          the director's other port)
  arp_attack.py IFACE offlink VIP COUNT                   ARP requests for VIP from COUNT
                                                          different off-subnet senders
  arp_attack.py IFACE martian VIP LB_MAC PORT SRC...      one TCP SYN to VIP:PORT per SRC

Sends only on IFACE, a veth inside the test's own namespaces.
"""
import sys
import time

from scapy.all import ARP, IP, TCP, Ether, conf, sendp

ATTACKER = "02:ba:d0:00:00:01"


def main():
    conf.verb = 0
    iface, what = sys.argv[1], sys.argv[2]
    if what == "hijack":
        rs_ip, vip, count, interval = sys.argv[3], sys.argv[4], int(sys.argv[5]), float(sys.argv[6])
        frames = [
            Ether(src=ATTACKER, dst="ff:ff:ff:ff:ff:ff") / ARP(op=1, hwsrc=ATTACKER, psrc=rs_ip, pdst=vip),
            Ether(src=ATTACKER, dst="ff:ff:ff:ff:ff:ff") / ARP(op=2, hwsrc=ATTACKER, psrc=rs_ip, pdst=rs_ip,
                                                              hwdst="ff:ff:ff:ff:ff:ff"),
            Ether(src=ATTACKER, dst="ff:ff:ff:ff:ff:ff") / ARP(op=1, hwsrc=ATTACKER, psrc=rs_ip, pdst=rs_ip),
        ]
        for _ in range(count):
            sendp(frames, iface=iface)
            time.sleep(interval)
    elif what == "offlink":
        vip, count = sys.argv[3], int(sys.argv[4])
        frames = []
        for i in range(count):
            src = "10.%d.%d.%d" % (20 + i // 62500, (i // 250) % 250, 1 + i % 250)
            frames.append(Ether(src=ATTACKER, dst="ff:ff:ff:ff:ff:ff") /
                          ARP(op=1, hwsrc=ATTACKER, psrc=src, pdst=vip))
        # In bursts with pauses, so no RX ring overflows and every frame is counted.
        for k in range(0, len(frames), 100):
            sendp(frames[k:k + 100], iface=iface)
            time.sleep(0.02)
    elif what == "martian":
        vip, lb_mac, port = sys.argv[3], sys.argv[4], int(sys.argv[5])
        for n, src in enumerate(sys.argv[6:]):
            sendp(Ether(src=ATTACKER, dst=lb_mac) / IP(src=src, dst=vip) / TCP(sport=30000 + n, dport=port, flags="S"),
                  iface=iface)
    else:
        sys.exit("unknown action " + what)


if __name__ == "__main__":
    main()
