# A JVM's own description of its structures (gHotSpotVMStructs...) and the layout derived from it.
bpfprof_unit_test(test_hotspot_vmstructs ${CMAKE_CURRENT_LIST_DIR}/test_hotspot_vmstructs.c)
