# The values options take (counts, thresholds, intervals, sizes). The CLI is
# not in bpfprof_core, so the file under test is compiled in directly.
bpfprof_unit_test(test_option_values ${CMAKE_CURRENT_LIST_DIR}/test_option_values.c
                  ${CMAKE_SOURCE_DIR}/userspace/cli/option_values.c)
