# The man page the .deb installs lists the same long options as --help
# (bpfprof, view and report).
add_test(NAME unit.man_page
  COMMAND ${CMAKE_CURRENT_LIST_DIR}/man_page.sh $<TARGET_FILE:bpfprof>
          ${CMAKE_SOURCE_DIR}/packaging/bpfprof.1)
set_tests_properties(unit.man_page PROPERTIES LABELS unit TIMEOUT 60)
