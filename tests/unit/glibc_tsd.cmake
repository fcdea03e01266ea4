# glibc's thread-specific data offset (issue 40), measured in this process: where CPython's thread state is.
bpfprof_unit_test(test_glibc_tsd ${CMAKE_CURRENT_LIST_DIR}/test_glibc_tsd.c)
