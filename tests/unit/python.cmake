# Python frames (issue 26): naming code objects (lang/python_procs.c) and the
# interpreter layouts (lang/python_layout.c), against Debian's python3.
set(PYTHON_TEST_DIR ${CMAKE_CURRENT_LIST_DIR})
find_program(BPFPROF_PYTHON3 python3 PATHS /usr/bin NO_DEFAULT_PATH)
if(NOT BPFPROF_PYTHON3)
  set(BPFPROF_PYTHON3 /usr/bin/python3) # fails at test time: install-deps --test installs it
endif()
get_filename_component(BPFPROF_PYTHON3_REAL ${BPFPROF_PYTHON3} REALPATH)

bpfprof_unit_test(test_python_procs ${PYTHON_TEST_DIR}/test_python_procs.c)
target_compile_definitions(test_python_procs PRIVATE PYTHON_BINARY="${BPFPROF_PYTHON3_REAL}")
# What a hostile Python process can make us spend (issue 37): memory, stalled reads.
bpfprof_unit_test(test_python_bounds ${PYTHON_TEST_DIR}/test_python_bounds.c)
# The reader pool behind those reads: one stuck worker per uid, bounded, forgiving.
bpfprof_unit_test(test_python_reader ${PYTHON_TEST_DIR}/test_python_reader.c)

# The layout against the interpreter's own headers (python3-dev), which
# install-deps --test installs: the version of /usr/bin/python3.
execute_process(COMMAND ${BPFPROF_PYTHON3} -c
  "import sysconfig; print(sysconfig.get_paths()['include'])"
  OUTPUT_VARIABLE BPFPROF_PYTHON_INCLUDE OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
if(BPFPROF_PYTHON_INCLUDE AND EXISTS ${BPFPROF_PYTHON_INCLUDE}/internal/pycore_frame.h)
  bpfprof_unit_test(test_python_layout ${PYTHON_TEST_DIR}/test_python_layout.c)
  target_include_directories(test_python_layout PRIVATE ${BPFPROF_PYTHON_INCLUDE})
  target_compile_definitions(test_python_layout PRIVATE PYTHON_BINARY="${BPFPROF_PYTHON3_REAL}")
else()
  message(WARNING "no Python headers for ${BPFPROF_PYTHON3} (python3-dev): test_python_layout is not built")
endif()
