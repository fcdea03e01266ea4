# DWARF: source lines, inlined frames and separate debug files (test_dwarf.c).
set(DWARF_TEST_DIR ${CMAKE_CURRENT_LIST_DIR})
set(DWARF_FIX_SOURCE ${DWARF_TEST_DIR}/fixtures/dwarf/dwarf_fix.c)

# Optimised with debug info, as distributions build what they ship: the
# always_inline helpers exist only as DWARF inlined-subroutine scopes.
add_executable(dwarf_fix ${DWARF_FIX_SOURCE})
target_compile_options(dwarf_fix PRIVATE -O2 -g -fPIE)
target_link_options(dwarf_fix PRIVATE -pie -Wl,--build-id=sha1)
# The shapes debug info ships in: a separate .debug file (found by build-id),
# a stripped binary without a link to it, one with a .gnu_debuglink naming
# "dwarf_fix.debug" and its CRC, and a debug file with DWARF but no .symtab.
add_custom_command(TARGET dwarf_fix POST_BUILD
  COMMAND ${CMAKE_OBJCOPY} --only-keep-debug $<TARGET_FILE:dwarf_fix>
          $<TARGET_FILE:dwarf_fix>.debug
  COMMAND ${CMAKE_STRIP} --strip-all -o $<TARGET_FILE:dwarf_fix>.stripped
          $<TARGET_FILE:dwarf_fix>
  COMMAND ${CMAKE_OBJCOPY} --add-gnu-debuglink=$<TARGET_FILE:dwarf_fix>.debug
          $<TARGET_FILE:dwarf_fix>.stripped $<TARGET_FILE:dwarf_fix>.linked
  COMMAND ${CMAKE_STRIP} --strip-all --keep-section=.debug_* -o
          $<TARGET_FILE:dwarf_fix>.nosym.debug $<TARGET_FILE:dwarf_fix>.debug
  VERBATIM)

# Another build of the same source (another build-id, other addresses): a
# debug file that must be refused when found under dwarf_fix's build-id.
add_executable(dwarf_fix_other ${DWARF_FIX_SOURCE})
target_compile_options(dwarf_fix_other PRIVATE -O1 -g -fPIE)
target_link_options(dwarf_fix_other PRIVATE -pie -Wl,--build-id=sha1)
add_custom_command(TARGET dwarf_fix_other POST_BUILD
  COMMAND ${CMAKE_OBJCOPY} --only-keep-debug $<TARGET_FILE:dwarf_fix_other>
          $<TARGET_FILE:dwarf_fix_other>.debug
  VERBATIM)

bpfprof_unit_test(test_dwarf ${DWARF_TEST_DIR}/test_dwarf.c)
target_compile_definitions(test_dwarf PRIVATE
  DWARF_FIX="$<TARGET_FILE:dwarf_fix>"
  DWARF_FIX_STRIPPED="$<TARGET_FILE:dwarf_fix>.stripped"
  DWARF_FIX_LINKED="$<TARGET_FILE:dwarf_fix>.linked"
  DWARF_FIX_DEBUG="$<TARGET_FILE:dwarf_fix>.debug"
  DWARF_FIX_NOSYM_DEBUG="$<TARGET_FILE:dwarf_fix>.nosym.debug"
  DWARF_FIX_OTHER_DEBUG="$<TARGET_FILE:dwarf_fix_other>.debug"
  DWARF_FIX_SOURCE="${DWARF_FIX_SOURCE}"
  ADDR2LINE_PATH="${CMAKE_ADDR2LINE}")
add_dependencies(test_dwarf dwarf_fix dwarf_fix_other)
