# Java and JavaScript frames' entries and their categories (symbols/java_frames.c, issue 39).
bpfprof_unit_test(test_java_frames ${CMAKE_CURRENT_LIST_DIR}/test_java_frames.c)
