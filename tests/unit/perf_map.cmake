# JIT symbols: perf map files (/tmp/perf-PID.map) against a fake /proc.
bpfprof_unit_test(test_perf_map ${CMAKE_CURRENT_LIST_DIR}/test_perf_map.c)
# JIT symbols: each user's share of the limits of all perf maps and jitdumps, and its reading budget.
bpfprof_unit_test(test_perf_map_users ${CMAKE_CURRENT_LIST_DIR}/test_perf_map_users.c)
