# libFuzzer targets for every parser of outside data (issue 20), built only
# with -DBPFPROF_FUZZ=ON and clang (scripts/fuzz.sh does both, and runs them).
# Everything is compiled with -fsanitize=fuzzer-no-link,address,undefined
# (see the top-level CMakeLists.txt); the targets link libFuzzer itself.
set(BPFPROF_FUZZ_TARGETS fuzz_proc_maps fuzz_perf_map fuzz_jitdump fuzz_hotspot_vmstructs fuzz_hotspot_decode fuzz_v8_meta fuzz_v8_decode fuzz_python_linetable fuzz_python_strings fuzz_kallsyms fuzz_container_id fuzz_elf
    fuzz_model fuzz_runtime_tables fuzz_unwind_tables fuzz_python_info fuzz_python_walk fuzz_php_names fuzz_ruby)
foreach(target ${BPFPROF_FUZZ_TARGETS})
  add_executable(${target} ${CMAKE_SOURCE_DIR}/tests/fuzz/${target}.c)
  target_link_libraries(${target} PRIVATE bpfprof_core)
  target_include_directories(${target} PRIVATE ${CMAKE_SOURCE_DIR}/userspace)
  target_link_options(${target} PRIVATE -fsanitize=fuzzer)
endforeach()
# bpfprof report's reader lives in report/, outside bpfprof_core: compiled in here.
add_executable(fuzz_report ${CMAKE_SOURCE_DIR}/tests/fuzz/fuzz_report.c
               ${CMAKE_SOURCE_DIR}/userspace/report/report_load.c
               ${CMAKE_SOURCE_DIR}/userspace/report/report_stats.c)
target_link_libraries(fuzz_report PRIVATE bpfprof_core PkgConfig::JANSSON)
target_include_directories(fuzz_report PRIVATE ${CMAKE_SOURCE_DIR}/userspace)
target_link_options(fuzz_report PRIVATE -fsanitize=fuzzer)
add_custom_target(fuzzers DEPENDS ${BPFPROF_FUZZ_TARGETS} fuzz_report)
