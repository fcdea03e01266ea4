# libelf handles on files other users may change (util/elf_open.c): mapped
# only when root alone can change them, read otherwise, so a truncation is
# an error and never a SIGBUS.
bpfprof_unit_test(test_elf_open ${CMAKE_CURRENT_LIST_DIR}/test_elf_open.c)
