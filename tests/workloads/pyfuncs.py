# SPDX-License-Identifier: BSD-2-Clause
# The Python frames workload (issue 26, tests/integration/python.sh): three
# nested pure-Python functions, level1 -> level2 -> level3, burning on the
# main thread and on a second thread for SECONDS; with --fork, a forked
# child burns in them too. Prints its truth: the pid, the second thread's
# and the child's ids, and each function's first and last line, so the
# checker knows where every sample's line must fall.
#
# Usage: python3 pyfuncs.py SECONDS [--fork]
import os
import sys
import threading
import time


def level3(n):
    s = 0
    for i in range(n):
        s += i * i
    return s


def level2(n):
    a = level3(n)
    b = level3(n // 2)
    return a + b


def level1(end):
    while time.time() < end:
        level2(5000)


def worker(end, ready):
    print(f'pyfuncs: thread tid {threading.get_native_id()}', flush=True)
    ready.set()
    level1(end)


for f in (level1, level2, level3, worker):
    code = f.__code__
    last = max(line for _, _, line in code.co_lines() if line is not None)
    print(f'pyfuncs: func {f.__name__} lines {code.co_firstlineno} {last}', flush=True)
end = time.time() + float(sys.argv[1])
if '--fork' in sys.argv[2:]:
    child = os.fork()
    if child == 0:
        level1(end)
        os._exit(0)
    print(f'pyfuncs: child pid {child}', flush=True)
ready = threading.Event()
t = threading.Thread(target=worker, args=(end, ready), name='pyworker')
t.start()
ready.wait()
print(f'pyfuncs: truth pid {os.getpid()}', flush=True)
level1(end)
t.join()
if '--fork' in sys.argv[2:]:
    os.waitpid(child, 0)
