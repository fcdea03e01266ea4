# The snapshot directory of `bpfprof continuous`: names, creation, pruning,
# crashed writers' temporary files, and --max-bytes sizes. The CLI is not in
# bpfprof_core, so the file under test is compiled in directly.
bpfprof_unit_test(test_snapshot_dir ${CMAKE_CURRENT_LIST_DIR}/test_snapshot_dir.c
                  ${CMAKE_SOURCE_DIR}/userspace/cli/snapshot_dir.c
                  ${CMAKE_SOURCE_DIR}/userspace/cli/snapshot_dir_walk.c)
# The way to it (issue 27): every component checked before anything is made,
# links in the middle of the path followed only when root or we own them.
bpfprof_unit_test(test_snapshot_dir_walk ${CMAKE_CURRENT_LIST_DIR}/test_snapshot_dir_walk.c
                  ${CMAKE_SOURCE_DIR}/userspace/cli/snapshot_dir_walk.c)
