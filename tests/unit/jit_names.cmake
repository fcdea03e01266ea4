# JIT runtimes' symbol names (perf maps, jitdumps) taken apart; runtimes told from their files.
bpfprof_unit_test(test_jit_names ${CMAKE_CURRENT_LIST_DIR}/test_jit_names.c)
