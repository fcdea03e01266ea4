# SPDX-License-Identifier: BSD-2-Clause
# The every-CPython workload (issue 40, tests/integration/python.sh pool):
# runs under 2.7 and 3.6-3.13 alike. POOL threads call pool_function ->
# Worker.method -> a generator (values) -> a closure (square), burning for
# SECONDS; one more thread sleeps in time.sleep inside sleeper() the whole
# time, 0.2 s at a time (each sleep's switch-out is one the recording
# sees), and another in one time.sleep for all of it inside long_sleeper()
# (asleep since before any recording: no switch-out is seen). Prints its truth: its pid and version, each pool thread's and the
# sleeper's thread id (gettid), so the checker knows whose samples are whose.
#
# Usage: python pypool.py SECONDS [POOL]
import ctypes
import os
import sys
import threading
import time

SYS_gettid = 186  # x86_64
libc = ctypes.CDLL(None, use_errno=True)


def gettid():
    return libc.syscall(SYS_gettid)


def make_closure(k):
    def square(i):
        return i * i + k
    return square


def values(n):
    square = make_closure(3)
    for i in range(n):
        yield square(i)


class Worker(object):
    def __init__(self, n):
        self.n = n

    def method(self):
        total = 0
        for v in values(self.n):
            total += v
        return total


def pool_function(n):
    return Worker(n).method()


def pool_thread(end, ready):
    sys.stdout.write('pypool: pool tid %d\n' % gettid())
    sys.stdout.flush()
    ready.release()
    while time.time() < end:
        pool_function(2000)


def sleeper(end, ready):
    sys.stdout.write('pypool: sleeper tid %d\n' % gettid())
    sys.stdout.flush()
    ready.release()
    while time.time() < end:
        time.sleep(0.2)


def long_sleeper(end, ready):
    sys.stdout.write('pypool: long sleeper tid %d\n' % gettid())
    sys.stdout.flush()
    ready.release()
    time.sleep(max(0.0, end - time.time()))


def main():
    secs = float(sys.argv[1])
    pool = int(sys.argv[2]) if len(sys.argv) > 2 else 3
    end = time.time() + secs
    ready = threading.Semaphore(0)
    threads = [threading.Thread(target=pool_thread, args=(end, ready)) for _ in range(pool)]
    threads.append(threading.Thread(target=sleeper, args=(end, ready)))
    threads.append(threading.Thread(target=long_sleeper, args=(end, ready)))
    for t in threads:
        t.start()
    for _ in threads:
        ready.acquire()
    sys.stdout.write('pypool: truth pid %d version %d.%d\n' % (os.getpid(), sys.version_info[0],
                                                               sys.version_info[1]))
    sys.stdout.flush()
    for t in threads:
        t.join()


main()
