# System call names (issue 5): the generated tables.
bpfprof_unit_test(test_syscall_names unit/test_syscall_names.c)
bpfprof_unit_test(test_syscalls_model unit/test_syscalls_model.c)
