# JIT symbols: jitdump files (jit-PID.dump) read as perf maps, broken ones included.
bpfprof_unit_test(test_jitdump ${CMAKE_CURRENT_LIST_DIR}/test_jitdump.c)
