# SPDX-License-Identifier: BSD-2-Clause
# Run by each CPython under test (2.7 and 3.x alike) for test_python_names:
# prints, for frames of a method, a nested function and (3.x) functions
# with non-ASCII names, where their code object is, the frame's f_lasti
# and line and the name bpfprof should read, then waits on stdin while the
# test reads its memory:
#   P <sys.hexversion> <address of the code type>
#   C <code address> <f_lasti as Python shows it> <f_lineno> <first line> <name>
#   E
import sys

out = []


def report(f, name):
    out.append("C %d %d %d %d %s" % (id(f.f_code), f.f_lasti, f.f_lineno,
                                      f.f_code.co_firstlineno, name))


class Worker(object):
    def run(self):
        report(sys._getframe(), "Worker.run")

    def deep(self):
        def inner(n):
            x = n + 1
            report(sys._getframe(), "Worker.deep.<locals>.inner")
            return x
        return inner(1)


Worker().run()
Worker().deep()
if sys.version_info[0] >= 3:
    # Latin-1 (one byte a character) and CJK (two) names: compact, not ASCII.
    exec(compile("def gr\u00fc\u00dfe():\n    report(sys._getframe(), 'gr\u00fc\u00dfe')\n"
                 "def \u51fd\u6570():\n    report(sys._getframe(), '\u51fd\u6570')\n"
                 "gr\u00fc\u00dfe()\n\u51fd\u6570()\n", __file__, "exec"))
sys.stdout.write("P %d %d\n" % (sys.hexversion, id(type(report.__code__))))
for line in out:
    sys.stdout.write(line + "\n")
sys.stdout.write("E\n")
sys.stdout.flush()
sys.stdin.readline()
