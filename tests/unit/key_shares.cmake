# Who holds the entries of the BPF map of files without a table (issue 38):
# capture is not in bpfprof_core, so the file under test is compiled in.
bpfprof_unit_test(test_key_shares ${CMAKE_CURRENT_LIST_DIR}/test_key_shares.c
                  ${CMAKE_SOURCE_DIR}/userspace/capture/key_shares.c)
