# Names other users control, made safe for the terminal (util/term_escape.c):
# control characters, C1, bidi overrides and invalid UTF-8 escaped, valid
# UTF-8 kept (issue 27).
bpfprof_unit_test(test_term_escape ${CMAKE_CURRENT_LIST_DIR}/test_term_escape.c)
