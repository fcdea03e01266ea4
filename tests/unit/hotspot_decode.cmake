# A JVM's compressed streams (line tables, PcDescs, inlining scopes) and Java names.
bpfprof_unit_test(test_hotspot_decode ${CMAKE_CURRENT_LIST_DIR}/test_hotspot_decode.c)
