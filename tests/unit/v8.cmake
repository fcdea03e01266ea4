# V8's postmortem metadata (v8dbg_* symbols of node) and the decoders of its heap objects (issue 39).
bpfprof_unit_test(test_v8_meta ${CMAKE_CURRENT_LIST_DIR}/test_v8_meta.c)
bpfprof_unit_test(test_v8_decode ${CMAKE_CURRENT_LIST_DIR}/test_v8_decode.c)
bpfprof_unit_test(test_v8_names ${CMAKE_CURRENT_LIST_DIR}/test_v8_names.c)
bpfprof_unit_test(test_v8_procs ${CMAKE_CURRENT_LIST_DIR}/test_v8_procs.c)
