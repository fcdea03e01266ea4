# The cgroup library (--cgroup), and processes' cgroups in the model and the profile.
bpfprof_unit_test(test_cgroup ${CMAKE_CURRENT_LIST_DIR}/test_cgroup.c)
bpfprof_unit_test(test_cgroup_model ${CMAKE_CURRENT_LIST_DIR}/test_cgroup_model.c)
bpfprof_unit_test(test_cgroup_emit ${CMAKE_CURRENT_LIST_DIR}/test_cgroup_emit.c)
