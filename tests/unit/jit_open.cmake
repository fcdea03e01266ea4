# JIT symbols: a perf map or jitdump opened on a worker, with a deadline the caller never waits past.
bpfprof_unit_test(test_jit_open ${CMAKE_CURRENT_LIST_DIR}/test_jit_open.c)
