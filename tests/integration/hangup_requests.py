# SPDX-License-Identifier: BSD-2-Clause
#
# hangup_requests.py PORT N PATH: N connections to 127.0.0.1:PORT, one after
# another, each sending `GET PATH` and closing at once, without waiting for
# an answer. Blocking calls leave a few microseconds between connect() and
# close(): many connections close while still in the server's accept queue,
# and the kernel then reports the client's socket (FIN_WAIT2, no file) with
# uid 0. Prints "sent S of N". Copied by the tests to where the unprivileged
# user can read it.
import socket
import sys

port, total, path = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
request = f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n".encode()
sent = 0
for _ in range(total):
    s = socket.socket()
    try:
        s.connect(("127.0.0.1", port))
        s.sendall(request)
        sent += 1
    except OSError:
        pass
    s.close()
print(f"sent {sent} of {total}")
