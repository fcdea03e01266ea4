# Bounded symbol caches for continuous mode: mark and sweep of the
# symbolizer's objects and of the JIT perf maps (fixtures from symbols.cmake).
bpfprof_unit_test(test_symbolizer_evict ${CMAKE_CURRENT_LIST_DIR}/test_symbolizer_evict.c)
target_compile_definitions(test_symbolizer_evict PRIVATE SYMFIX_LIB="$<TARGET_FILE:symfix_lib>")
add_dependencies(test_symbolizer_evict symfix_lib)

# The per-profile time budgets under overlapping builds (a snapshot's and a scrape's).
bpfprof_unit_test(test_symbolizer_builds ${CMAKE_CURRENT_LIST_DIR}/test_symbolizer_builds.c)
