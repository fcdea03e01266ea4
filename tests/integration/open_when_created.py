# SPDX-License-Identifier: BSD-2-Clause
#
# open_when_created.py DIR NAME: another user watching DIR (inotify) opens
# DIR/NAME the moment it is created, before a `chmod 600` that follows can
# shut them out, then reads what is written into it. Prints "watching", then
# "opened; read N bytes" and exits 0, or "cannot open: REASON" for each try
# that fails and watches on: a test knows when the user has had its chance.
# Copied by the tests to where the unprivileged user can read it.
import ctypes
import os
import struct
import sys
import time

IN_CREATE, IN_MOVED_TO = 0x100, 0x80
libc = ctypes.CDLL(None, use_errno=True)
directory, name = sys.argv[1], sys.argv[2]
path = os.path.join(directory, name)
ino = libc.inotify_init()
if ino < 0 or libc.inotify_add_watch(ino, directory.encode(), IN_CREATE | IN_MOVED_TO) < 0:
    sys.exit(f"inotify: {os.strerror(ctypes.get_errno())}")
print("watching", flush=True)
while True:
    buf = os.read(ino, 4096)
    off = 0
    while off < len(buf):
        _, _, _, n = struct.unpack_from("iIII", buf, off)
        got = buf[off + 16 : off + 16 + n].rstrip(b"\0").decode()
        off += 16 + n
        if got != name:
            continue
        try:
            fd = os.open(path, os.O_RDONLY)
        except OSError as e:
            print(f"cannot open: {e.strerror}", flush=True)
            continue
        # Opened: what is written later is read through this descriptor.
        data, deadline = b"", time.monotonic() + 5
        while not data and time.monotonic() < deadline:
            data = os.pread(fd, 4096, 0)
            time.sleep(0.01)
        print(f"opened; read {len(data)} bytes", flush=True)
        sys.exit(0)
