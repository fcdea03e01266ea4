# The values options take (counts, thresholds, intervals, sizes): util/option_values.c.
bpfprof_unit_test(test_option_values ${CMAKE_CURRENT_LIST_DIR}/test_option_values.c)
