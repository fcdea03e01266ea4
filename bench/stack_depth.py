#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
#
# stack_depth.py PROFILE.json.gz NAME...: the mean number of user frames the
# walk stepped through per on-CPU sample of the processes called NAME, from a
# profile bpfprof wrote (runtimes.sh's frames per sample: a deeper stack
# costs more CFI steps). Physical frames only: the methods C2 inlined into
# one frame (inlineDepth > 0) were one step of the walk; kernel frames and
# off-CPU rows are left out. Prints "MEAN SAMPLES".
import gzip
import json
import sys

KERNEL, OFF_CPU = "Kernel", "Off-CPU"


def main():
    with gzip.open(sys.argv[1]) as f:
        prof = json.load(f)
    names = set(sys.argv[2:])
    cats = [c["name"] for c in prof["meta"]["categories"]]
    shared = prof["shared"]
    frames, stacks = shared["frameTable"], shared["stackTable"]
    depth_of = {}

    def depth(s):
        # Bounded by the table's length, as tests/check/profile.mjs walks it.
        if s in depth_of:
            return depth_of[s]
        n, off_cpu, start = 0, False, s
        for _ in range(stacks["length"] + 1):
            fr = stacks["frame"][s]
            cat = cats[frames["category"][fr]]
            off_cpu |= cat == OFF_CPU
            if cat not in (KERNEL, OFF_CPU) and not frames["inlineDepth"][fr]:
                n += 1
            off = stacks["prefixOffset"][s]
            if off == 0 or s - off < 0:
                break
            s -= off
        depth_of[start] = None if off_cpu else n
        return depth_of[start]

    total = count = 0
    for t in prof["threads"]:
        if t.get("processName") not in names:
            continue
        smp = t["samples"]
        weights = smp.get("weight") or [1] * smp["length"]
        for s, w in zip(smp["stack"], weights):
            d = None if s is None else depth(s)
            if d is None:
                continue
            total += d * w
            count += w
    print(f"{total / count if count else 0:.1f} {count}")


main()
