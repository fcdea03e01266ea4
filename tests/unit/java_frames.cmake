# Java and JavaScript frames as the profile's tables see them (symbols/java_frames.c, issue 39):
# their categories, and the memory a user's chains may hold.
bpfprof_unit_test(test_java_frames ${CMAKE_CURRENT_LIST_DIR}/test_java_frames.c)
