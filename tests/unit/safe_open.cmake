# Opening files that other users control (util/safe_open.c): regular files
# only, never blocking, and paths resolved inside a process's root.
bpfprof_unit_test(test_safe_open ${CMAKE_CURRENT_LIST_DIR}/test_safe_open.c)
