# JIT symbols: perf map files (/tmp/perf-PID.map) against a fake /proc.
bpfprof_unit_test(test_perf_map ${CMAKE_CURRENT_LIST_DIR}/test_perf_map.c)
