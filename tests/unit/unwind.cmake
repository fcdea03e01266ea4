# Unwinding: .eh_frame to unwind rows (unwind/cfi_table.c), against readelf.
set(UNWIND_TEST_DIR ${CMAKE_CURRENT_LIST_DIR})

# Built as distributions build: optimised, no frame pointers. A copy without
# .eh_frame_hdr has no index of its CFI.
add_executable(cfi_fix ${UNWIND_TEST_DIR}/fixtures/cfi/cfi_fix.c)
target_compile_options(cfi_fix PRIVATE -O2 -fomit-frame-pointer -fPIE)
target_link_options(cfi_fix PRIVATE -pie)
add_custom_command(TARGET cfi_fix POST_BUILD
  COMMAND ${CMAKE_OBJCOPY} --remove-section=.eh_frame_hdr $<TARGET_FILE:cfi_fix>
          $<TARGET_FILE:cfi_fix>.nohdr
  VERBATIM)

bpfprof_unit_test(test_cfi_table ${UNWIND_TEST_DIR}/test_cfi_table.c)
add_dependencies(test_cfi_table cfi_fix)
target_compile_definitions(test_cfi_table PRIVATE
  CFI_FIX="$<TARGET_FILE:cfi_fix>"
  CFI_FIX_NO_HDR="$<TARGET_FILE:cfi_fix>.nohdr"
  READELF_PATH="${CMAKE_READELF}")
