#!/usr/bin/env python
# Copyright: (c) 2026, gpufabric.roce maintainers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""A layer-2 hub for the lab, on loopback only.

Each VM NIC is a QEMU ``-netdev socket,udp=127.0.0.1:<hub>,localaddr=127.0.0.1:<own>``:
QEMU sends every Ethernet frame as one UDP datagram to the hub and receives frames on its
own port. The hub repeats each frame to every other member port, which makes all member
NICs one broadcast segment (a dumb switch). A multicast socket would do the same, but this
keeps every lab packet on 127.0.0.1 by construction.
"""

import argparse
import contextlib
import signal
import socket
import sys


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, required=True, help="UDP port the hub listens on (127.0.0.1)")
    parser.add_argument("members", type=int, nargs="+", help="UDP ports of the member NICs (127.0.0.1)")
    args = parser.parse_args()

    members = [("127.0.0.1", p) for p in args.members]
    sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    sock.bind(("127.0.0.1", args.port))
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    while True:
        frame, src = sock.recvfrom(65535)
        for member in members:
            if member != src:
                # A member that is not up yet must not stop the segment.
                with contextlib.suppress(OSError):
                    sock.sendto(frame, member)


if __name__ == "__main__":
    main()
