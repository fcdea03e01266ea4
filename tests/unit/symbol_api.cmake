# The symbolication API of `bpfprof view` (/source/v1, /asm/v1): which files a
# profile lets it show, and the code it disassembles. The CLI is not in
# bpfprof_core, so the files under test are compiled in.
bpfprof_unit_test(test_symbol_api ${CMAKE_CURRENT_LIST_DIR}/test_symbol_api.c
                  ${CMAKE_SOURCE_DIR}/userspace/view/symbol_api.c
                  ${CMAKE_SOURCE_DIR}/userspace/report/report_load.c)
target_link_libraries(test_symbol_api PRIVATE PkgConfig::CAPSTONE)
