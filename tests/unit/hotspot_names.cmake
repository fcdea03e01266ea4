# Java frames named from a JVM built in memory (hotspot_image.h), through hotspot_names and hotspot_procs.
bpfprof_unit_test(test_hotspot_names ${CMAKE_CURRENT_LIST_DIR}/test_hotspot_names.c)
bpfprof_unit_test(test_hotspot_procs ${CMAKE_CURRENT_LIST_DIR}/test_hotspot_procs.c)
# What reads of other users' JVMs may cost: a budget per user under a global one.
bpfprof_unit_test(test_read_budget ${CMAKE_CURRENT_LIST_DIR}/test_read_budget.c)
