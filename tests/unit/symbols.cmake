# Symbolization: /proc/PID/maps, kallsyms, ELF symbols, demangling, the symbolizer.
set(SYMBOLS_TEST_DIR ${CMAKE_CURRENT_LIST_DIR})

# Fixtures with known functions, built the way real binaries are: a PIE
# executable and a shared library, at -O1 with inlining off so every fixture
# function exists at its own address.
add_library(symfix_lib SHARED ${SYMBOLS_TEST_DIR}/fixtures/symfix_lib.c)
set_target_properties(symfix_lib PROPERTIES OUTPUT_NAME symfix)
target_compile_options(symfix_lib PRIVATE -O1 -fno-inline)
target_link_options(symfix_lib PRIVATE -Wl,--build-id=sha1)

add_executable(symfix_main ${SYMBOLS_TEST_DIR}/fixtures/symfix_main.c)
target_compile_options(symfix_main PRIVATE -O1 -fno-inline -fPIE)
target_link_options(symfix_main PRIVATE -pie -Wl,--build-id=sha1)
# A stripped copy (no .symtab) and its separate debug file, as distributions ship them.
add_custom_command(TARGET symfix_main POST_BUILD
  COMMAND ${CMAKE_OBJCOPY} --only-keep-debug $<TARGET_FILE:symfix_main>
          $<TARGET_FILE:symfix_main>.debug
  COMMAND ${CMAKE_STRIP} --strip-all -o $<TARGET_FILE:symfix_main>.stripped
          $<TARGET_FILE:symfix_main>
  VERBATIM)

set(SYMFIX_DEFINITIONS
  SYMFIX_LIB="$<TARGET_FILE:symfix_lib>"
  SYMFIX_EXE="$<TARGET_FILE:symfix_main>"
  SYMFIX_EXE_STRIPPED="$<TARGET_FILE:symfix_main>.stripped"
  SYMFIX_EXE_DEBUG="$<TARGET_FILE:symfix_main>.debug"
  NM_PATH="${CMAKE_NM}"
  READELF_PATH="${CMAKE_READELF}")

bpfprof_unit_test(test_proc_maps ${SYMBOLS_TEST_DIR}/test_proc_maps.c)
bpfprof_unit_test(test_kallsyms ${SYMBOLS_TEST_DIR}/test_kallsyms.c)
bpfprof_unit_test(test_demangle ${SYMBOLS_TEST_DIR}/test_demangle.c)

bpfprof_unit_test(test_elf_symbols ${SYMBOLS_TEST_DIR}/test_elf_symbols.c)
target_compile_definitions(test_elf_symbols PRIVATE ${SYMFIX_DEFINITIONS})
add_dependencies(test_elf_symbols symfix_lib symfix_main)

# PIE, so that resolving the test's own functions goes through a load bias,
# as it does for every binary on a modern distribution.
bpfprof_unit_test(test_symbolizer ${SYMBOLS_TEST_DIR}/test_symbolizer.c)
target_compile_definitions(test_symbolizer PRIVATE ${SYMFIX_DEFINITIONS})
target_compile_options(test_symbolizer PRIVATE -fPIE)
target_link_options(test_symbolizer PRIVATE -pie)
target_link_libraries(test_symbolizer PRIVATE ${CMAKE_DL_LIBS})
add_dependencies(test_symbolizer symfix_lib symfix_main)

# PLT stubs have no symbols; bpfprof names them "func@plt" like objdump. Lazy
# binding gives .plt (with its resolver header) and .plt.got; IBT adds .plt.sec.
add_executable(symfix_plt ${SYMBOLS_TEST_DIR}/fixtures/symfix_plt.c)
target_compile_options(symfix_plt PRIVATE -O1 -fPIE)
target_link_options(symfix_plt PRIVATE -pie -Wl,-z,lazy)
add_executable(symfix_plt_ibt ${SYMBOLS_TEST_DIR}/fixtures/symfix_plt.c)
target_compile_options(symfix_plt_ibt PRIVATE -O1 -fPIE -fcf-protection=full)
target_link_options(symfix_plt_ibt PRIVATE -pie -Wl,-z,lazy -Wl,-z,ibtplt)
target_compile_definitions(test_elf_symbols PRIVATE
  SYMFIX_PLT="$<TARGET_FILE:symfix_plt>" SYMFIX_PLT_IBT="$<TARGET_FILE:symfix_plt_ibt>"
  OBJDUMP_PATH="${CMAKE_OBJDUMP}")
add_dependencies(test_elf_symbols symfix_plt symfix_plt_ibt)

# Separate debug files against what a binary's owner controls (issue 27):
# size caps, owners, CRCs within a budget and cached, the process's root.
bpfprof_unit_test(test_debug_file ${SYMBOLS_TEST_DIR}/test_debug_file.c)
target_compile_definitions(test_debug_file PRIVATE ${SYMFIX_DEFINITIONS}
  OBJCOPY_PATH="${CMAKE_OBJCOPY}")
add_dependencies(test_debug_file symfix_main)
