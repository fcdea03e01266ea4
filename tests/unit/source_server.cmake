# /source/v1 of `bpfprof view`: which source files a profile lets it show.
# The CLI is not in bpfprof_core, so the files under test are compiled in.
bpfprof_unit_test(test_source_server ${CMAKE_CURRENT_LIST_DIR}/test_source_server.c
                  ${CMAKE_SOURCE_DIR}/userspace/cli/source_server.c
                  ${CMAKE_SOURCE_DIR}/userspace/cli/report_load.c)
