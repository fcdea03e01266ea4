# SPDX-License-Identifier: BSD-2-Clause
# The python3 unwinding workload (tests/integration/unwind.sh python): a
# recursive pure-Python function on the main thread and hashlib on a thread,
# for SECONDS. Prints "pyloop: truth pid P".
#
# Usage: python3 pyloop.py SECONDS
import hashlib
import os
import sys
import threading
import time


def fib(n):
    return n if n < 2 else fib(n - 1) + fib(n - 2)


# Large buffers: hashlib drops the GIL while it hashes one, so this thread
# burns CPU beside the main thread instead of waiting for the GIL.
def hasher(end):
    data = b'x' * (8 << 20)
    while time.time() < end:
        hashlib.sha256(data).digest()


print(f'pyloop: truth pid {os.getpid()}', flush=True)
end = time.time() + float(sys.argv[1])
t = threading.Thread(target=hasher, args=(end,), name='hasher')
t.start()
while time.time() < end:
    fib(20)
t.join()
