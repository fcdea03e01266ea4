# The user a uid belongs to (util/uid_owner.c): /etc/subuid's ranges, read
# bounded and only from a file no other user may have written.
bpfprof_unit_test(test_uid_owner ${CMAKE_CURRENT_LIST_DIR}/test_uid_owner.c)
