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

# The image of the debug sections a file another user may change is read
# into (symbols/dwarf_image.h), against the file itself, mapped: the
# fixture with its DWARF compressed both ways, beside 16 MiB of other data,
# and a small unit compiled for a 32-bit and a big-endian target.
set(DWARF_FIX_FILE $<TARGET_FILE:dwarf_fix>)
set(DWARF_CROSS_SOURCE ${DWARF_TEST_DIR}/fixtures/dwarf/dwarf_cross.c)
set(DWARF_CROSS_DIR ${CMAKE_CURRENT_BINARY_DIR}/dwarf_cross)
# Linked (at address 0 a unit's range reads as code the linker dropped), by
# lld when there is one: binutils' ld links for its own target only.
find_program(BPFPROF_LLD NAMES ld.lld ld.lld-19 ld.lld-18 ld.lld-17 ld.lld-16 ld.lld-15 ld.lld-14)
if(BPFPROF_LLD)
  set(DWARF_CROSS_FLAGS -O2 -g -ffreestanding -nostdinc -nostdlib --ld-path=${BPFPROF_LLD}
      -Wl,-e,cross_entry)
  add_custom_command(OUTPUT ${DWARF_CROSS_DIR}/i386 ${DWARF_CROSS_DIR}/ppc64
    COMMAND ${CMAKE_COMMAND} -E make_directory ${DWARF_CROSS_DIR}
    COMMAND ${BPF_CLANG} --target=i386-linux-gnu ${DWARF_CROSS_FLAGS} ${DWARF_CROSS_SOURCE}
            -o ${DWARF_CROSS_DIR}/i386
    COMMAND ${BPF_CLANG} --target=powerpc64-linux-gnu ${DWARF_CROSS_FLAGS} ${DWARF_CROSS_SOURCE}
            -o ${DWARF_CROSS_DIR}/ppc64
    DEPENDS ${DWARF_CROSS_SOURCE}
    VERBATIM)
  set(DWARF_CROSS_FIXTURES DWARF_FIX_32="${DWARF_CROSS_DIR}/i386"
      DWARF_FIX_BE="${DWARF_CROSS_DIR}/ppc64")
  add_custom_target(dwarf_cross DEPENDS ${DWARF_CROSS_DIR}/i386 ${DWARF_CROSS_DIR}/ppc64)
else()
  message(STATUS "no ld.lld: test_dwarf_image leaves out its 32-bit and big-endian fixtures")
endif()
add_custom_command(TARGET dwarf_fix POST_BUILD
  COMMAND ${CMAKE_OBJCOPY} --compress-debug-sections=zlib ${DWARF_FIX_FILE} ${DWARF_FIX_FILE}.zlib
  COMMAND ${CMAKE_OBJCOPY} --compress-debug-sections=zlib-gnu ${DWARF_FIX_FILE}
          ${DWARF_FIX_FILE}.zlib-gnu
  COMMAND truncate -s 16M ${DWARF_FIX_FILE}.16m
  COMMAND ${CMAKE_OBJCOPY} --add-section .blob=${DWARF_FIX_FILE}.16m ${DWARF_FIX_FILE}
          ${DWARF_FIX_FILE}.blob
  COMMAND ${CMAKE_COMMAND} -E rm -f ${DWARF_FIX_FILE}.16m
  VERBATIM)
bpfprof_unit_test(test_dwarf_image ${DWARF_TEST_DIR}/test_dwarf_image.c)
target_compile_definitions(test_dwarf_image PRIVATE
  DWARF_FIX="${DWARF_FIX_FILE}"
  DWARF_FIX_DEBUG="${DWARF_FIX_FILE}.debug"
  DWARF_FIX_ZLIB="${DWARF_FIX_FILE}.zlib"
  DWARF_FIX_ZLIB_GNU="${DWARF_FIX_FILE}.zlib-gnu"
  DWARF_FIX_BLOB="${DWARF_FIX_FILE}.blob"
  ${DWARF_CROSS_FIXTURES})
# A file cut short between two fstats (test_section_sizes_wrap): fstat wrapped.
target_link_options(test_dwarf_image PRIVATE -Wl,--wrap=fstat)
add_dependencies(test_dwarf_image dwarf_fix)
if(BPFPROF_LLD)
  add_dependencies(test_dwarf_image dwarf_cross)
endif()
