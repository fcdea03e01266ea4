# SPDX-License-Identifier: BSD-2-Clause
# Run by each CPython under test (2.7 and 3.x alike): compiles code whose
# line tables take every shape (line and byte deltas past one byte, lines
# going backwards, ranges without a line) and prints, per code object, its
# line table and, per instruction offset, the line the interpreter's own
# PyCode_Addr2Line answers, for test_python_linetables to compare with
# bpfprof's decoders:
#   V <version>
#   F <format> <co_firstlineno> <table as hex>
#   L <byte offset> <line, 0 for none>
import ctypes
import sys

major, minor = sys.version_info[0], sys.version_info[1]
if major == 2:
    fmt = 0  # PY_LINES_LNOTAB_27
elif minor < 10:
    fmt = 1  # PY_LINES_LNOTAB_36
elif minor == 10:
    fmt = 2  # PY_LINES_310
else:
    fmt = 3  # PY_LINES_311

src = [
    "def simple(a, b):\n    c = a + b\n    return c\n",
    "def loops(n):\n    t = 0\n    for i in range(n):\n        if i % 2:\n"
    "            t += i\n        else:\n            t -= 1\n"
    "    while t > 0:\n        t -= 3\n    return t\n",
    # Line deltas past 127 and 255.
    "def gap():\n    x = 1\n" + "\n" * 300 + "    return x\n",
    # Byte deltas past 255 on one line.
    "def wide():\n    return [" + ", ".join("a%d" % i for i in range(200)) + "]\n",
    "def long_body(x):\n" + "".join("    x = x + %d\n" % i for i in range(400))
    + "    return x\n",
    "class K(object):\n    def m(self, v):\n        try:\n"
    "            return [w * 2 for w in v]\n        finally:\n"
    "            self.done = True\n    def g(self):\n        f = lambda q: (q +\n"
    "            1)\n        return f\n",
    # Lines out of order: an expression's parts evaluated away from their line.
    "def backwards(a, b):\n    return (a\n            if b else\n            a + 1)\n",
    "def nested():\n    def inner(y):\n        return y * 2\n    return inner\n",
]
top = compile("".join(src), "fixture.py", "exec")

addr2line = ctypes.pythonapi.PyCode_Addr2Line
addr2line.argtypes = [ctypes.py_object, ctypes.c_int]
addr2line.restype = ctypes.c_int


def table(co):
    if fmt >= 2:
        return bytearray(co.co_linetable)
    return bytearray(co.co_lnotab)


out = ["V %d.%d.%d" % tuple(sys.version_info[:3])]
todo = [top]
while todo:
    co = todo.pop()
    for c in co.co_consts:
        if hasattr(c, "co_code"):
            todo.append(c)
    t = table(co)
    out.append("F %d %d %s" % (fmt, co.co_firstlineno,
                               "".join("%02x" % b for b in t) or "-"))
    n = len(co.co_code)
    step = 1 if major == 2 else 2
    offsets = list(range(0, n, step))
    # Past the code: lnotab's last line (3.11+'s reader asserts on them).
    if fmt < 3:
        offsets += [n, n + 100]
    for off in offsets:
        line = addr2line(co, off)
        out.append("L %d %d" % (off, line if line > 0 else 0))
sys.stdout.write("\n".join(out) + "\n")
