# Code object and string layouts of every CPython bpfprof names (issue 40),
# against each version's own headers: one test per version, built with the
# include directory of the pyenv install of that version (BPFPROF_PYENV,
# default ~/.pyenv/versions). A version not installed is a skipped test
# that says which.
set(BPFPROF_PYENV "$ENV{HOME}/.pyenv/versions" CACHE PATH "pyenv's versions, for the tests of every CPython")
set(BPFPROF_PYTHON_VERSIONS 2.7 3.6 3.7 3.8 3.9 3.10 3.11 3.12 3.13)
foreach(ver ${BPFPROF_PYTHON_VERSIONS})
  file(GLOB headers "${BPFPROF_PYENV}/${ver}.*/include/python${ver}*/Python.h")
  string(REPLACE "." "" tag ${ver})
  if(headers)
    list(GET headers 0 header)
    get_filename_component(include ${header} DIRECTORY)
    bpfprof_unit_test(test_python_code_layouts_${tag} ${CMAKE_CURRENT_LIST_DIR}/test_python_code_layouts.c)
    target_include_directories(test_python_code_layouts_${tag} PRIVATE ${include})
    target_compile_definitions(test_python_code_layouts_${tag} PRIVATE PY_HEADERS="${include}")
    # Python's headers are not ours to keep warning-free.
    target_compile_options(test_python_code_layouts_${tag} PRIVATE -w)
  else()
    add_test(NAME unit.test_python_code_layouts_${tag}
      COMMAND sh -c "echo 'Python ${ver}: no headers under ${BPFPROF_PYENV}/${ver}.*/include: not checked'; exit 77")
    set_tests_properties(unit.test_python_code_layouts_${tag} PROPERTIES LABELS unit SKIP_RETURN_CODE 77)
  endif()
endforeach()

# The interpreters themselves (and Debian's python3.11), for the tests that
# run each: "version=path,...", an empty path for one not installed.
set(BPFPROF_PYTHON_INTERPRETERS "")
foreach(ver ${BPFPROF_PYTHON_VERSIONS})
  file(GLOB found "${BPFPROF_PYENV}/${ver}.*/bin/python${ver}")
  set(path "")
  if(found)
    list(GET found 0 path)
  endif()
  string(APPEND BPFPROF_PYTHON_INTERPRETERS "${ver}=${path},")
endforeach()
if(EXISTS /usr/bin/python3.11)
  string(APPEND BPFPROF_PYTHON_INTERPRETERS "debian-3.11=/usr/bin/python3.11,")
else()
  string(APPEND BPFPROF_PYTHON_INTERPRETERS "debian-3.11=,")
endif()

# Line tables of every format against each interpreter's own PyCode_Addr2Line.
bpfprof_unit_test(test_python_linetables ${CMAKE_CURRENT_LIST_DIR}/test_python_linetables.c)
target_compile_definitions(test_python_linetables PRIVATE
  PYTHON_INTERPRETERS="${BPFPROF_PYTHON_INTERPRETERS}"
  FIXTURE_SCRIPT="${CMAKE_CURRENT_LIST_DIR}/python_lines_fixture.py")

# Frames named from each live interpreter's memory, as the recording does (no BPF).
bpfprof_unit_test(test_python_names ${CMAKE_CURRENT_LIST_DIR}/test_python_names.c)
target_compile_definitions(test_python_names PRIVATE
  PYTHON_INTERPRETERS="${BPFPROF_PYTHON_INTERPRETERS}"
  TARGET_SCRIPT="${CMAKE_CURRENT_LIST_DIR}/python_names_target.py")

# Names as a hostile process may store them (2.7 byte strings, 3.x compact str).
bpfprof_unit_test(test_python_strings ${CMAKE_CURRENT_LIST_DIR}/test_python_strings.c)

# Code objects of every layout as a hostile process fakes them.
bpfprof_unit_test(test_python_hostile_code ${CMAKE_CURRENT_LIST_DIR}/test_python_hostile_code.c)
