bpfprof_unit_test(test_model ${CMAKE_CURRENT_LIST_DIR}/test_model.c)
bpfprof_unit_test(test_interning ${CMAKE_CURRENT_LIST_DIR}/test_interning.c)
bpfprof_unit_test(test_sched ${CMAKE_CURRENT_LIST_DIR}/test_sched.c)
bpfprof_unit_test(test_lifecycle ${CMAKE_CURRENT_LIST_DIR}/test_lifecycle.c)
