# A runtime's anonymous code as the few ranges BPF checks (lang/rt_ranges.c, issue 39).
bpfprof_unit_test(test_rt_ranges ${CMAKE_CURRENT_LIST_DIR}/test_rt_ranges.c)
