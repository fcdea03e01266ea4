# The lock the frame sources are shared under (util/fair_lock.c): waiters are served in order.
bpfprof_unit_test(test_fair_lock ${CMAKE_CURRENT_LIST_DIR}/test_fair_lock.c)
