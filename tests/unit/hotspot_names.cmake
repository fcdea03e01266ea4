# Java frames named from a JVM built in memory (hotspot_image.h), through hotspot_names.
bpfprof_unit_test(test_hotspot_names ${CMAKE_CURRENT_LIST_DIR}/test_hotspot_names.c)
