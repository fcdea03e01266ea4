# The perf side-band reader (capture/): the parser on rings in memory, and,
# as root, the kernel's records of a real child and thread. capture/ is not
# in bpfprof_core, so the sources it needs are compiled in here.
bpfprof_unit_test(test_sideband
  ${CMAKE_CURRENT_LIST_DIR}/test_sideband.c
  ${CMAKE_SOURCE_DIR}/userspace/capture/sideband.c
  ${CMAKE_SOURCE_DIR}/userspace/capture/cpus.c)
target_link_libraries(test_sideband PRIVATE PkgConfig::LIBBPF)
