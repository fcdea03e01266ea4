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


def hasher(end):
    while time.time() < end:
        hashlib.sha256(b'x' * 65536).digest()


print(f'pyloop: truth pid {os.getpid()}', flush=True)
end = time.time() + float(sys.argv[1])
t = threading.Thread(target=hasher, args=(end,), name='hasher')
t.start()
while time.time() < end:
    fib(20)
t.join()
