# Build-ids read from files other users made (util/elf_build_id.c): a
# crafted note's size costs neither memory nor time.
bpfprof_unit_test(test_elf_build_id ${CMAKE_CURRENT_LIST_DIR}/test_elf_build_id.c)
