# Unwinding: .eh_frame to unwind rows (unwind/cfi_table.c), against readelf.
set(UNWIND_TEST_DIR ${CMAKE_CURRENT_LIST_DIR})

# Built as distributions build: optimised, no frame pointers. A copy without
# .eh_frame_hdr has no index of its CFI (as gcc -static links), and one
# without .eh_frame either has no CFI at all.
add_executable(cfi_fix ${UNWIND_TEST_DIR}/fixtures/cfi/cfi_fix.c)
target_compile_options(cfi_fix PRIVATE -O2 -fomit-frame-pointer -fPIE)
target_link_options(cfi_fix PRIVATE -pie)
add_custom_command(TARGET cfi_fix POST_BUILD
  COMMAND ${CMAKE_OBJCOPY} --remove-section=.eh_frame_hdr $<TARGET_FILE:cfi_fix>
          $<TARGET_FILE:cfi_fix>.nohdr
  COMMAND ${CMAKE_OBJCOPY} --remove-section=.eh_frame_hdr --remove-section=.eh_frame
          $<TARGET_FILE:cfi_fix> $<TARGET_FILE:cfi_fix>.nocfi
  VERBATIM)

# The same, linked at a fixed address: its text's addresses are not its offsets.
add_executable(cfi_fix_nopie ${UNWIND_TEST_DIR}/fixtures/cfi/cfi_fix.c)
target_compile_options(cfi_fix_nopie PRIVATE -O2 -fomit-frame-pointer -fno-PIE)
target_link_options(cfi_fix_nopie PRIVATE -no-pie)

bpfprof_unit_test(test_cfi_table ${UNWIND_TEST_DIR}/test_cfi_table.c)
add_dependencies(test_cfi_table cfi_fix)
target_compile_definitions(test_cfi_table PRIVATE
  CFI_FIX="$<TARGET_FILE:cfi_fix>"
  CFI_FIX_NO_HDR="$<TARGET_FILE:cfi_fix>.nohdr"
  CFI_FIX_NO_CFI="$<TARGET_FILE:cfi_fix>.nocfi"
  READELF_PATH="${CMAKE_READELF}")

# An entry point in assembly without CFI (as ld.so's is): a root row, not a gap.
add_executable(cfi_entry_fix ${UNWIND_TEST_DIR}/fixtures/cfi/entry_fix.c)
# No libc, so no sanitizer runtime either (the ASan build's flags are undone).
target_compile_options(cfi_entry_fix PRIVATE -O2 -fomit-frame-pointer -fno-PIE -fasynchronous-unwind-tables
  -fno-sanitize=all)
target_link_options(cfi_entry_fix PRIVATE -nostdlib -static -no-pie -fno-sanitize=all)
bpfprof_unit_test(test_cfi_entry ${UNWIND_TEST_DIR}/test_cfi_entry.c)
add_dependencies(test_cfi_entry cfi_entry_fix cfi_fix)
target_compile_definitions(test_cfi_entry PRIVATE
  ENTRY_FIX="$<TARGET_FILE:cfi_entry_fix>"
  CFI_FIX="$<TARGET_FILE:cfi_fix>")

bpfprof_unit_test(test_unwind_store ${UNWIND_TEST_DIR}/test_unwind_store.c)
add_dependencies(test_unwind_store cfi_fix cfi_fix_nopie)
target_compile_definitions(test_unwind_store PRIVATE
  CFI_FIX="$<TARGET_FILE:cfi_fix>"
  CFI_FIX_NOPIE="$<TARGET_FILE:cfi_fix_nopie>"
  CFI_FIX_NO_CFI="$<TARGET_FILE:cfi_fix>.nocfi"
  CFI_FIX_SOURCE="${UNWIND_TEST_DIR}/fixtures/cfi/cfi_fix.c")

# The slots' allocator: first fit, merged runs, quarantine (issue 38).
bpfprof_unit_test(test_slot_alloc ${UNWIND_TEST_DIR}/test_slot_alloc.c)

# The store's budgets: users' shares, the per-file cap, eviction by use.
bpfprof_unit_test(test_unwind_store_shares ${UNWIND_TEST_DIR}/test_unwind_store_shares.c)
add_dependencies(test_unwind_store_shares cfi_fix)
target_compile_definitions(test_unwind_store_shares PRIVATE CFI_FIX="$<TARGET_FILE:cfi_fix>")

# The store's eviction: which tables go, which are protected or pinned, and from whom.
bpfprof_unit_test(test_unwind_store_evict ${UNWIND_TEST_DIR}/test_unwind_store_evict.c)
add_dependencies(test_unwind_store_evict cfi_fix)
target_compile_definitions(test_unwind_store_evict PRIVATE CFI_FIX="$<TARGET_FILE:cfi_fix>")

# The walk over a stack copy reads it through the finisher's own read.
bpfprof_unit_test(test_user_walk ${UNWIND_TEST_DIR}/test_user_walk.c
  ${CMAKE_SOURCE_DIR}/userspace/capture/stack_finish.c)
bpfprof_unit_test(test_eh_frame_index ${UNWIND_TEST_DIR}/test_eh_frame_index.c)

# Go's function table and the rows made from it, on Debian's own go command
# (golang-go: a stripped Go binary whose names are only in .gopclntab).
find_program(BPFPROF_GO go)
bpfprof_unit_test(test_go_pclntab ${UNWIND_TEST_DIR}/test_go_pclntab.c)
if(BPFPROF_GO)
  get_filename_component(BPFPROF_GO_REAL ${BPFPROF_GO} REALPATH)
  target_compile_definitions(test_go_pclntab PRIVATE GO_BINARY="${BPFPROF_GO_REAL}")
endif()

# Go's files and lines for the symbolizer, each function's tables decoded
# once, within a budget per binary (issue 37): the same lines as walking.
bpfprof_unit_test(test_go_lines ${UNWIND_TEST_DIR}/test_go_lines.c)
if(BPFPROF_GO)
  target_compile_definitions(test_go_lines PRIVATE GO_BINARY="${BPFPROF_GO_REAL}")
endif()

# The CFI programs run once (issue 27): the tables are libdw's row for row on
# real binaries (cfi_table_libdw.c: the quadratic builder of before), an FDE
# of 300k rows is linear, the budgets stop longer ones.
bpfprof_unit_test(test_cfi_program ${UNWIND_TEST_DIR}/test_cfi_program.c
                  ${UNWIND_TEST_DIR}/cfi_table_libdw.c)
add_dependencies(test_cfi_program cfi_fix bpfprof_workload_nofp_static)
target_link_libraries(test_cfi_program PRIVATE PkgConfig::LIBDW)
target_compile_definitions(test_cfi_program PRIVATE
  CFI_FIX="$<TARGET_FILE:cfi_fix>"
  STATIC_BINARY="$<TARGET_FILE:bpfprof_workload_nofp_static>")
if(BPFPROF_GO)
  target_compile_definitions(test_cfi_program PRIVATE GO_BINARY="${BPFPROF_GO_REAL}")
endif()

# The unwind table thread (issue 27): bounded per owner, in jobs and in
# descriptors, owners in turn, jobs that reopen their file check it is the same.
bpfprof_unit_test(test_table_worker ${UNWIND_TEST_DIR}/test_table_worker.c
  ${CMAKE_SOURCE_DIR}/userspace/capture/table_worker.c)
add_dependencies(test_table_worker cfi_fix)
target_compile_definitions(test_table_worker PRIVATE CFI_FIX="$<TARGET_FILE:cfi_fix>")

# An index whose entries all point at one long FDE: walked once (issue 27).
bpfprof_unit_test(test_cfi_repeats ${UNWIND_TEST_DIR}/test_cfi_repeats.c)

# A hostile .eh_frame's size and count of FDEs (issue 37): refused before it
# is read, or before its FDEs are listed past the budget.
bpfprof_unit_test(test_eh_frame_size ${UNWIND_TEST_DIR}/test_eh_frame_size.c)

# The files stacks met without their unwind table (capture/unwind_misses.c).
bpfprof_unit_test(test_unwind_misses ${UNWIND_TEST_DIR}/test_unwind_misses.c
  ${CMAKE_SOURCE_DIR}/userspace/capture/unwind_misses.c)

# The compact rows the BPF unwinder reads (issue 38): the same rule as the
# table's at every row's edges and at random, on the fixtures, libc, the vDSO.
bpfprof_unit_test(test_compact_table ${UNWIND_TEST_DIR}/test_compact_table.c)
add_dependencies(test_compact_table cfi_fix cfi_fix_nopie bpfprof_workload_nofp
                 bpfprof_workload_nofp_cpp bpfprof_workload_nofp_static)
target_compile_definitions(test_compact_table PRIVATE
  CFI_FIX="$<TARGET_FILE:cfi_fix>"
  CFI_FIX_NOPIE="$<TARGET_FILE:cfi_fix_nopie>"
  NOFP="$<TARGET_FILE:bpfprof_workload_nofp>"
  NOFP_CPP="$<TARGET_FILE:bpfprof_workload_nofp_cpp>"
  STATIC_BINARY="$<TARGET_FILE:bpfprof_workload_nofp_static>")
if(BPFPROF_GO)
  target_compile_definitions(test_compact_table PRIVATE GO_BINARY="${BPFPROF_GO_REAL}")
endif()

# The unwind table cache (issue 38): round trip, every damaged or foreign
# entry refused, links and others' directories never used, LRU bounds; and
# the builders' output on checked-in fixtures, against UNWIND_TABLE_GENERATOR.
bpfprof_unit_test(test_table_cache ${UNWIND_TEST_DIR}/test_table_cache.c)
add_dependencies(test_table_cache cfi_fix)
target_compile_definitions(test_table_cache PRIVATE
  CFI_FIX="$<TARGET_FILE:cfi_fix>"
  CFI_FIX_NO_CFI="$<TARGET_FILE:cfi_fix>.nocfi"
  FIXTURE_DIR="${CMAKE_SOURCE_DIR}/tests/fuzz/corpus")
if(BPFPROF_GO)
  target_compile_definitions(test_table_cache PRIVATE GO_BINARY="${BPFPROF_GO_REAL}")
endif()

# Stacks finished from stack copies (issue 38): join, park, publish, the
# deadline, the bytes parked in all and per user, a copy lost on the ring.
bpfprof_unit_test(test_stack_finish ${UNWIND_TEST_DIR}/test_stack_finish.c
  ${CMAKE_SOURCE_DIR}/userspace/capture/stack_finish.c)

# The unwinder's BPF maps as the built object declares them (no load, no root).
bpfprof_unit_test(test_unwind_maps ${UNWIND_TEST_DIR}/test_unwind_maps.c)
add_dependencies(test_unwind_maps bpf_skeleton)
target_link_libraries(test_unwind_maps PRIVATE PkgConfig::LIBBPF)
target_compile_definitions(test_unwind_maps PRIVATE BPF_OBJECT="${CMAKE_BINARY_DIR}/bpfprof.bpf.o")
