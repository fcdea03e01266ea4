# SPDX-License-Identifier: BSD-2-Clause
# A CPU-bound pure-Python workload for bench/python.sh: three nested
# functions in a loop for SECONDS; prints "ops_per_s=N" (level2 calls per
# second of wall time).
import sys
import time


def level3(n):
    s = 0
    for i in range(n):
        s += i * i
    return s


def level2(n):
    return level3(n) + level3(n // 2)


def level1(end):
    ops = 0
    while time.time() < end:
        level2(2000)
        ops += 1
    return ops


start = time.time()
ops = level1(start + float(sys.argv[1]))
print(f'ops_per_s={ops / (time.time() - start):.1f}')
