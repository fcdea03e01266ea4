# How many connections each client of `bpfprof view` may hold (http/peer_limit.c):
# the CLI is not in bpfprof_core, so the file under test is compiled in.
bpfprof_unit_test(test_peer_limit ${CMAKE_CURRENT_LIST_DIR}/test_peer_limit.c
                  ${CMAKE_SOURCE_DIR}/userspace/http/peer_limit.c)
