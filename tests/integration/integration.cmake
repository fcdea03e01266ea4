# Integration tests: the real bpfprof (root, BPF) records the workloads of
# tests/workloads, and tests/check judges each profile, through the Firefox
# Profiler's own loader (@firefox-devtools/profiler-cli, pinned in
# tests/check/package-lock.json). Included by tests/CMakeLists.txt.
#
#   ctest --test-dir build -L integration --output-on-failure   (as root)
#
# Without root the tests are skipped (exit 77), or fail when CI is set.

find_package(Threads REQUIRED)
find_program(BPFPROF_NODE node)
if(NOT BPFPROF_NODE)
  set(BPFPROF_NODE node) # fails at test time with "node: not found"
endif()

set(BPFPROF_TESTS_DIR ${CMAKE_SOURCE_DIR}/tests)
set(BPFPROF_CHECK_BUILD_DIR ${CMAKE_BINARY_DIR}/check)

# --- Workloads ----------------------------------------------------------------
# Their own flags only: the profiler unwinds with frame pointers, so every burn
# function must keep its frame and stay a function of its own; and a sanitizer
# build of bpfprof must not change the code the tests expect to see.
foreach(workload burner forker sleeper pipepair spawner syscaller cgroup_worker idlers)
  add_executable(bpfprof_workload_${workload} ${BPFPROF_TESTS_DIR}/workloads/${workload}.c)
  set_target_properties(bpfprof_workload_${workload} PROPERTIES
    OUTPUT_NAME ${workload}
    RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/workloads
    COMPILE_OPTIONS "-O1;-fno-omit-frame-pointer;-fno-inline;-Wall;-Wextra;-Wno-unused-parameter"
    LINK_OPTIONS "")
  target_link_libraries(bpfprof_workload_${workload} PRIVATE Threads::Threads)
endforeach()
# bench/'s ping-pong: two threads that wake each other, ~1 M switches/s when
# pinned to one CPU.
add_executable(bpfprof_workload_pingpong ${CMAKE_SOURCE_DIR}/bench/pingpong.c)
set_target_properties(bpfprof_workload_pingpong PROPERTIES
  OUTPUT_NAME pingpong
  RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/workloads
  COMPILE_OPTIONS "-O1;-fno-omit-frame-pointer;-Wall;-Wextra")
target_link_libraries(bpfprof_workload_pingpong PRIVATE Threads::Threads)

# --- Checker dependencies: `npm ci` into the build tree -----------------------
add_test(NAME integration.setup.npm_ci
  COMMAND bash ${BPFPROF_TESTS_DIR}/integration/npm_ci.sh ${BPFPROF_TESTS_DIR}/check ${BPFPROF_CHECK_BUILD_DIR})
set_tests_properties(integration.setup.npm_ci PROPERTIES
  FIXTURES_SETUP bpfprof_check_npm
  LABELS integration
  TIMEOUT 300)

set(BPFPROF_INTEGRATION_ENV
  BPFPROF=$<TARGET_FILE:bpfprof>
  BURNER=$<TARGET_FILE:bpfprof_workload_burner>
  FORKER=$<TARGET_FILE:bpfprof_workload_forker>
  SLEEPER=$<TARGET_FILE:bpfprof_workload_sleeper>
  PIPEPAIR=$<TARGET_FILE:bpfprof_workload_pipepair>
  SPAWNER=$<TARGET_FILE:bpfprof_workload_spawner>
  SYSCALLER=$<TARGET_FILE:bpfprof_workload_syscaller>
  CGROUP_WORKER=$<TARGET_FILE:bpfprof_workload_cgroup_worker>
  IDLERS=$<TARGET_FILE:bpfprof_workload_idlers>
  PINGPONG=$<TARGET_FILE:bpfprof_workload_pingpong>
  CHECK_DIR=${BPFPROF_TESTS_DIR}/check
  CHECK_NODE_MODULES=${BPFPROF_CHECK_BUILD_DIR}/node_modules
  NODE=${BPFPROF_NODE})

# bpfprof_integration_test(NAME TIMEOUT SERIAL SCRIPT [ARGS...])
# SERIAL: recordings measure CPU shares, so they run alone.
function(bpfprof_integration_test name timeout serial script)
  set(test integration.${name})
  add_test(NAME ${test} COMMAND bash ${BPFPROF_TESTS_DIR}/integration/${script} ${ARGN})
  set_tests_properties(${test} PROPERTIES
    LABELS integration
    TIMEOUT ${timeout}
    RUN_SERIAL ${serial}
    SKIP_RETURN_CODE 77
    FIXTURES_REQUIRED bpfprof_check_npm
    ENVIRONMENT "${BPFPROF_INTEGRATION_ENV};TEST_OUT_DIR=${CMAKE_BINARY_DIR}/integration/${name};BPFPROF_TEST_STATE_DIR=${CMAKE_BINARY_DIR}/integration/${name}/state")
endfunction()

# The checkers' self-tests load many profiles through profiler-cli: ~40 s on
# an idle machine of this kind, ~75 s beside two busy loops. The timeout only
# catches a hang.
set(BPFPROF_SELFTEST_TIMEOUT 300)

# The checkers' own test: good hand-made profiles pass, broken ones fail.
add_test(NAME integration.check_selftest COMMAND ${BPFPROF_NODE} --test ${BPFPROF_TESTS_DIR}/check/selftest.mjs)
set_tests_properties(integration.check_selftest PROPERTIES
  LABELS "integration;checker"
  TIMEOUT ${BPFPROF_SELFTEST_TIMEOUT}
  FIXTURES_REQUIRED bpfprof_check_npm
  ENVIRONMENT "CHECK_NODE_MODULES=${BPFPROF_CHECK_BUILD_DIR}/node_modules")

# The scheduler checkers' own test, on hand-made sleeper and pipepair profiles.
add_test(NAME integration.check_selftest_sched
  COMMAND ${BPFPROF_NODE} --test ${BPFPROF_TESTS_DIR}/check/selftest_sched.mjs)
set_tests_properties(integration.check_selftest_sched PROPERTIES
  LABELS "integration;checker"
  TIMEOUT ${BPFPROF_SELFTEST_TIMEOUT}
  FIXTURES_REQUIRED bpfprof_check_npm
  ENVIRONMENT "CHECK_NODE_MODULES=${BPFPROF_CHECK_BUILD_DIR}/node_modules")

bpfprof_integration_test(record_pid 90 TRUE record_pid.sh)
# -p follows the children forked while recording (issue 19), unless --no-inherit.
bpfprof_integration_test(record_pid_children 90 TRUE record_pid_children.sh inherit)
bpfprof_integration_test(record_pid_no_inherit 90 TRUE record_pid_children.sh no_inherit)
# bpfprof view: the profile served to the Firefox Profiler (issue 19).
bpfprof_integration_test(view 180 TRUE view.sh)
# bpfprof report: the summary of a burner recording against the workload (issue 19).
bpfprof_integration_test(report 90 TRUE report.sh)
# pprof output beside the Firefox profile, read by go tool pprof (issue 19).
bpfprof_integration_test(pprof 120 TRUE pprof.sh)
add_test(NAME integration.check_selftest_report
  COMMAND ${BPFPROF_NODE} --test ${BPFPROF_TESTS_DIR}/check/selftest_report.mjs)
set_tests_properties(integration.check_selftest_report PROPERTIES
  LABELS "integration;checker"
  TIMEOUT ${BPFPROF_SELFTEST_TIMEOUT}
  FIXTURES_REQUIRED bpfprof_check_npm
  ENVIRONMENT "CHECK_NODE_MODULES=${BPFPROF_CHECK_BUILD_DIR}/node_modules")
bpfprof_integration_test(record_all 120 TRUE record_all.sh)
bpfprof_integration_test(record_all_loaded 300 TRUE record_all.sh loaded)
bpfprof_integration_test(record_command 90 TRUE record_command.sh)
bpfprof_integration_test(record_command_duration 90 TRUE record_command_duration.sh)
bpfprof_integration_test(default_output 90 TRUE default_output.sh)
bpfprof_integration_test(signal_int 90 TRUE signal_stop.sh INT)
bpfprof_integration_test(signal_term 90 TRUE signal_stop.sh TERM)

foreach(case not_root no_such_pid pid_above_max bad_pid_list output_in_proc output_under_file
             freq_zero freq_too_high bad_duration bad_sched_min sched_min_no_unit_junk
             unknown_option ambiguous_option missing_btf command_not_found bad_unwind
             bad_unwind_memory
             bad_debuginfod_timeout bad_syscalls syscalls_value_without_equals
             no_inherit_without_pid view_missing_file view_not_a_profile view_bad_port
             view_bad_profiler_url
             report_missing_file report_not_a_profile bad_format format_both_pb bad_mode)
  bpfprof_integration_test(error.${case} 60 FALSE error_case.sh ${case})
endforeach()

# Scheduler truth (issue 3): threadCPUDelta against the workloads' own
# CLOCK_THREAD_CPUTIME_ID, off-CPU samples and scheduling markers.
bpfprof_integration_test(sched_sleeper 90 TRUE sched_sleeper.sh)
bpfprof_integration_test(sched_pipe 90 TRUE sched_pipe.sh)
bpfprof_integration_test(sched_no_offcpu 90 TRUE sched_no_offcpu.sh)
bpfprof_integration_test(sched_min 90 TRUE sched_min.sh)
bpfprof_integration_test(sched_raw_tp 90 TRUE sched_raw_tp.sh)
# Cheap capture (issue 18): the wakeups of short waits stay in the kernel.
bpfprof_integration_test(sched_kept_wakeups 90 TRUE sched_kept_wakeups.sh)
# Wakeups from timers and interrupts name no bystander (issue 28).
bpfprof_integration_test(sched_wakers 120 TRUE sched_wakers.sh)
# Each wait is its own box in the stack chart (issue 28).
bpfprof_integration_test(sched_wait_boxes 90 TRUE sched_wait_boxes.sh)

# Processes over time (issue 4): lifecycles, exec, renames, symbols of exited processes.
# Ring buffers that cannot all be set up: one error, only our own descriptors closed.
# Some 40 starts under strace, each loading programs until a limit stops it:
# 37 s on a quiet machine, past 120 s beside another CI run; the timeout
# bounds a hang only.
bpfprof_integration_test(fd_limit 480 TRUE fd_limit.sh)
bpfprof_integration_test(lifecycle_spawner 120 TRUE lifecycle_spawner.sh)
bpfprof_integration_test(jit_node 120 TRUE jit_node.sh)
# A JVM's own description of its structures, read as bpfprof reads it (issue 39).
add_executable(bpfprof_workload_hotspot_probe ${BPFPROF_TESTS_DIR}/workloads/hotspot_probe.c)
set_target_properties(bpfprof_workload_hotspot_probe PROPERTIES
  OUTPUT_NAME hotspot_probe
  RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/workloads)
target_link_libraries(bpfprof_workload_hotspot_probe PRIVATE bpfprof_core)
target_include_directories(bpfprof_workload_hotspot_probe PRIVATE ${CMAKE_SOURCE_DIR}/userspace)
bpfprof_integration_test(hotspot_layout 300 TRUE hotspot_layout.sh)
# node's JS frames named from V8's own metadata, as BPF's capture gives them (issue 39).
add_executable(bpfprof_workload_v8_probe ${BPFPROF_TESTS_DIR}/workloads/v8_probe.c)
set_target_properties(bpfprof_workload_v8_probe PROPERTIES
  OUTPUT_NAME v8_probe
  RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/workloads)
target_link_libraries(bpfprof_workload_v8_probe PRIVATE bpfprof_core)
target_include_directories(bpfprof_workload_v8_probe PRIVATE ${CMAKE_SOURCE_DIR}/userspace)
bpfprof_integration_test(v8_frames 120 TRUE v8_frames.sh)
set_property(TEST integration.v8_frames APPEND PROPERTY ENVIRONMENT
  V8_PROBE=$<TARGET_FILE:bpfprof_workload_v8_probe>)
# A process claiming to be a JVM (issue 39): a libjvm.so of its own, run by a throw-away user.
add_library(bpfprof_workload_fakejvm_lib SHARED ${BPFPROF_TESTS_DIR}/workloads/fakejvm_lib.c)
set_target_properties(bpfprof_workload_fakejvm_lib PROPERTIES
  OUTPUT_NAME jvm PREFIX lib LIBRARY_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/workloads/fakejvm_lib
  C_VISIBILITY_PRESET hidden)
add_executable(bpfprof_workload_fakejvm ${BPFPROF_TESTS_DIR}/workloads/fakejvm.c)
set_target_properties(bpfprof_workload_fakejvm PROPERTIES
  OUTPUT_NAME fakejvm RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/workloads)
target_link_libraries(bpfprof_workload_fakejvm PRIVATE ${CMAKE_DL_LIBS})
foreach(mode fakejvm_huge fakejvm_endless fakejvm_tiny)
  bpfprof_integration_test(hostile_${mode} 180 TRUE hostile_jvm.sh ${mode})
  set_property(TEST integration.hostile_${mode} APPEND PROPERTY ENVIRONMENT
    FAKEJVM=$<TARGET_FILE:bpfprof_workload_fakejvm>
    FAKEJVM_LIB=$<TARGET_FILE:bpfprof_workload_fakejvm_lib>)
endforeach()
set_property(TEST integration.hotspot_layout APPEND PROPERTY ENVIRONMENT
  HOTSPOT_PROBE=$<TARGET_FILE:bpfprof_workload_hotspot_probe>)
# JIT runtimes as people run them (issue 39): node --perf-prof's jitdump, the
# JVM's map written at exit (every JDK present), and unnamed JIT code grouped.
bpfprof_integration_test(jit_runtimes 300 TRUE jit_runtimes.sh)
# The same workloads in containers: binaries and perf maps only inside a private
# mount namespace, pids that differ inside a pid namespace.
bpfprof_integration_test(lifecycle_spawner_mntns 120 TRUE lifecycle_spawner.sh mntns)
bpfprof_integration_test(lifecycle_spawner_pidns 120 TRUE lifecycle_spawner.sh pidns)
# The lifecycle checker's own test, on hand-made spawner profiles.
add_test(NAME integration.check_selftest_lifecycle
  COMMAND ${BPFPROF_NODE} --test ${BPFPROF_TESTS_DIR}/check/selftest_lifecycle.mjs)
set_tests_properties(integration.check_selftest_lifecycle PROPERTIES
  LABELS "integration;checker"
  TIMEOUT ${BPFPROF_SELFTEST_TIMEOUT}
  FIXTURES_REQUIRED bpfprof_check_npm
  ENVIRONMENT "CHECK_NODE_MODULES=${BPFPROF_CHECK_BUILD_DIR}/node_modules")
bpfprof_integration_test(jit_node_mntns 120 TRUE jit_node.sh mntns)
bpfprof_integration_test(jit_node_pidns 120 TRUE jit_node.sh pidns)
# A JIT without a runtime (tests/workloads/jit_anon.c): its code always comes
# with a perf mmap record, as an anonymous mapping; run as a child that exits
# before the recording ends, on the host and in namespaces.
add_executable(bpfprof_workload_jit_anon ${BPFPROF_TESTS_DIR}/workloads/jit_anon.c)
set_target_properties(bpfprof_workload_jit_anon PROPERTIES
  OUTPUT_NAME jit_anon
  RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/workloads
  COMPILE_OPTIONS "-O1;-fno-omit-frame-pointer;-Wall;-Wextra"
  LINK_OPTIONS "")
bpfprof_integration_test(jit_anon 120 TRUE jit_node.sh host anon)
bpfprof_integration_test(jit_anon_pidns 120 TRUE jit_node.sh pidns anon)
set_property(TEST integration.jit_anon integration.jit_anon_pidns APPEND PROPERTY ENVIRONMENT
  JIT_ANON=$<TARGET_FILE:bpfprof_workload_jit_anon>)

# Overload made visible (issue 20): 4 KiB rings under a switch storm lose
# records, and the profile's Lost events intervals account for every one.
bpfprof_integration_test(overload 120 TRUE overload.sh)

# What shows first in the Firefox Profiler (issue 21): the targets' threads,
# the blocked reader in -a, the launched command selected.
foreach(mode cmd pid all blocked)
  bpfprof_integration_test(initial_view_${mode} 90 TRUE initial_view.sh ${mode})
endforeach()
# Threads asleep all along (issue 28): their syscall from their saved
# registers (-p), and -a gives them their wait as -p does, at a bounded cost
# beside 5,000 sleepers.
foreach(mode pid all idlers)
  bpfprof_integration_test(blocked_all_along_${mode} 120 TRUE blocked_all_along.sh ${mode})
endforeach()
# A local user's 5,000 threads that fall asleep during root's -a (issue 37):
# a few weighted off-CPU rows per wait, not one per interval; peak RSS
# against a control run.
bpfprof_integration_test(hostile_sleepers 240 TRUE hostile_sleepers.sh)

# The first things a person sees (issue 28): -- spawner's tracks in start
# order, its 30 ms children hidden at first, the profile starting with the
# command, Profile Info, kernel frames' source view; --help at 80 columns;
# --view's output.
foreach(mode command help view)
  bpfprof_integration_test(first_view_${mode} 90 TRUE first_view.sh ${mode})
endforeach()

# kill -9 leaves no BPF object behind, and the next run removes its stale
# temporary file (issue 20).
bpfprof_integration_test(kill9 120 TRUE kill9.sh)

# A local user against a root bpfprof (issue 20): FIFOs where debug files
# go, a perf map behind a symlink in the user's own root, a huge perf map,
# planted output directories and snapshot names.
# A program of the user's that claims to be CPython and hands us hostile memory (issue 26).
add_executable(bpfprof_workload_fakepy ${BPFPROF_TESTS_DIR}/workloads/fakepy.c)
set_target_properties(bpfprof_workload_fakepy PROPERTIES
  OUTPUT_NAME fakepy
  RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/workloads
  COMPILE_OPTIONS "-O1;-Wall;-Wextra"
  LINK_OPTIONS "-rdynamic;-no-pie")
target_link_libraries(bpfprof_workload_fakepy PRIVATE pthread)
# And one that claims to be PHP (issue 40).
add_executable(bpfprof_workload_fakephp ${BPFPROF_TESTS_DIR}/workloads/fakephp.c)
set_target_properties(bpfprof_workload_fakephp PROPERTIES
  OUTPUT_NAME fakephp
  RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/workloads
  COMPILE_OPTIONS "-O1;-Wall;-Wextra"
  LINK_OPTIONS "-rdynamic;-no-pie")
foreach(mode debuglink_fifo perfmap_root perfmap_huge outdir_planted cgroup_claim
             retention_planted python_fake php_fake)
  bpfprof_integration_test(hostile_${mode} 180 TRUE hostile.sh ${mode})
  set_property(TEST integration.hostile_${mode} APPEND PROPERTY ENVIRONMENT
    JIT_ANON=$<TARGET_FILE:bpfprof_workload_jit_anon>
    FAKEPY=$<TARGET_FILE:bpfprof_workload_fakepy>
    FAKEPHP=$<TARGET_FILE:bpfprof_workload_fakephp>)
endforeach()

# A local user's fake Ruby (issue 40): a libruby of its own with hostile memory.
add_library(bpfprof_workload_fakerb_lib SHARED ${BPFPROF_TESTS_DIR}/workloads/fakerb_lib.c)
set_target_properties(bpfprof_workload_fakerb_lib PROPERTIES
  OUTPUT_NAME fakeruby PREFIX lib LIBRARY_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/workloads)
add_executable(bpfprof_workload_fakerb ${BPFPROF_TESTS_DIR}/workloads/fakerb.c)
set_target_properties(bpfprof_workload_fakerb PROPERTIES
  OUTPUT_NAME fakerb RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/workloads
  BUILD_RPATH "$ORIGIN" COMPILE_OPTIONS "-O1")
target_link_libraries(bpfprof_workload_fakerb PRIVATE bpfprof_workload_fakerb_lib)
bpfprof_integration_test(hostile_ruby_fake 180 TRUE hostile_ruby.sh)
set_property(TEST integration.hostile_ruby_fake APPEND PROPERTY ENVIRONMENT
  FAKERB=$<TARGET_FILE:bpfprof_workload_fakerb>
  FAKERB_LIB=$<TARGET_FILE:bpfprof_workload_fakerb_lib>)

# A local user's fake CPython against root's bpfprof -a (issue 37): line
# tables walked per sample, 2 GiB of code objects to copy, a frame on a FUSE
# page whose server never answers.
add_executable(bpfprof_workload_fusehold ${BPFPROF_TESTS_DIR}/workloads/fusehold.c)
set_target_properties(bpfprof_workload_fusehold PROPERTIES
  OUTPUT_NAME fusehold
  RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/workloads
  COMPILE_OPTIONS "-O1;-Wall;-Wextra")
foreach(mode line_tables code_budget fuse_stall fuse_two_users fuse_release)
  bpfprof_integration_test(hostile_python_${mode} 240 TRUE hostile_python.sh ${mode})
  set_property(TEST integration.hostile_python_${mode} APPEND PROPERTY ENVIRONMENT
    FAKEPY=$<TARGET_FILE:bpfprof_workload_fakepy>
    FUSEHOLD=$<TARGET_FILE:bpfprof_workload_fusehold>)
endforeach()

# A local user against bpfprof view (issue 27): the secret link in no command
# line, no file served that another user could not read, nor the viewer's
# own private file that another user's program names (issue 37), CORS for
# the front-end only, no other Host, 3,000 idle connections lock no one out.
foreach(mode cmdline browser source source_viewer cors host idle)
  bpfprof_integration_test(hostile_view_${mode} 180 TRUE hostile_view.sh ${mode})
endforeach()

# A local user against a root bpfprof through the files it reads for names
# (issue 27): a debug link to a 1 TB sparse file, a root-only file
# bind-mounted over a perf map, a perf map written for root's JIT, a
# debuginfod server answering with another build-id's file; a jitdump of
# another user's, or broken; a perf map on a FUSE mount that never answers a read (issue 39).
foreach(mode debuglink_huge perfmap_bind perfmap_foreign perfmap_fuse jitdump_foreign
        jitdump_broken debuginfod_buildid)
  bpfprof_integration_test(hostile_symbols_${mode} 240 TRUE hostile_symbols.sh ${mode})
  set_property(TEST integration.hostile_symbols_${mode} APPEND PROPERTY ENVIRONMENT
    JIT_ANON=$<TARGET_FILE:bpfprof_workload_jit_anon>
    FUSEHOLD=$<TARGET_FILE:bpfprof_workload_fusehold>)
endforeach()

# A local user truncating a library they mapped while root's bpfprof builds
# its tables or symbolizes it (issue 27): no SIGBUS, the profile written.
bpfprof_integration_test(hostile_files_truncate_mapped 180 TRUE hostile_files.sh truncate_mapped)

# A local user's binary whose sections cost what their size or shape asks
# (issue 37), each beside a control: a 900 MiB .eh_frame or .gopclntab
# refused on its size, a Go line table of 2^20 empty steps decoded once, not
# per address.
foreach(mode eh_frame_huge gopclntab_lines gopclntab_huge)
  bpfprof_integration_test(hostile_sections_${mode} 480 TRUE hostile_sections.sh ${mode})
endforeach()
# A `-g` binary of 500 MiB (its data) whose DWARF is a few KiB: only the
# debug sections read into root's memory, not the file (issue 37).
bpfprof_integration_test(hostile_sections_dwarf_data_huge 480 TRUE hostile_sections.sh dwarf_data_huge)

# A local user against continuous --out-dir and bpfprof report (issue 27): an
# inotify racer that swaps root's new directory for a link, a link in the
# middle of the path, names that hold terminal escapes.
foreach(mode outdir_race outdir_middle_symlink report_escapes)
  bpfprof_integration_test(hostile_dirs_${mode} 180 TRUE hostile_dirs.sh ${mode})
endforeach()

# CFI unwinding (issue 16): a workload built as distributions build, without
# frame pointers, whose stacks reach main only through .eh_frame.
add_executable(bpfprof_workload_nofp ${BPFPROF_TESTS_DIR}/workloads/nofp.c)
set_target_properties(bpfprof_workload_nofp PROPERTIES
  OUTPUT_NAME nofp
  RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/workloads
  COMPILE_OPTIONS "-O2;-fomit-frame-pointer;-Wall;-Wextra"
  LINK_OPTIONS "")
target_link_libraries(bpfprof_workload_nofp PRIVATE pthread)
# auto: what --unwind auto chooses on this kernel; auto_old: on one before 6.1.
foreach(mode cfi fp evict auto auto_old)
  bpfprof_integration_test(unwind_${mode} 120 TRUE unwind.sh ${mode})
  set_property(TEST integration.unwind_${mode} APPEND PROPERTY ENVIRONMENT
    NOFP=$<TARGET_FILE:bpfprof_workload_nofp>)
endforeach()
# The same linked -static (issue 26): non-PIE, libc inside, no .eh_frame_hdr.
add_executable(bpfprof_workload_nofp_static ${BPFPROF_TESTS_DIR}/workloads/nofp.c)
set_target_properties(bpfprof_workload_nofp_static PROPERTIES
  OUTPUT_NAME nofp_static
  RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/workloads
  COMPILE_OPTIONS "-O2;-fomit-frame-pointer;-Wall;-Wextra"
  LINK_OPTIONS "-static")
target_link_libraries(bpfprof_workload_nofp_static PRIVATE pthread)
bpfprof_integration_test(unwind_static 120 TRUE unwind.sh cfi static)
set_property(TEST integration.unwind_static APPEND PROPERTY ENVIRONMENT
  NOFP_STATIC=$<TARGET_FILE:bpfprof_workload_nofp_static>)
# A store sized for two of three fat tables run in turn: evicted by use, found again (issue 38).
bpfprof_integration_test(unwind_lru 120 TRUE unwind.sh cfi lru)
# A table that comes after its file's first samples: the file is named (issue 38).
bpfprof_integration_test(unwind_late 120 TRUE unwind.sh cfi late)
set_property(TEST integration.unwind_late APPEND PROPERTY ENVIRONMENT
  NOFP=$<TARGET_FILE:bpfprof_workload_nofp>)
# The unwind table cache (issue 38): built once, read back, a damaged entry built again.
bpfprof_integration_test(unwind_cache 120 TRUE unwind.sh cfi cache)
set_property(TEST integration.unwind_cache APPEND PROPERTY ENVIRONMENT
  NOFP=$<TARGET_FILE:bpfprof_workload_nofp>)
# The same, with stack copies: those stacks are finished once the table comes (issue 38).
bpfprof_integration_test(unwind_copy 120 TRUE unwind.sh cfi copy)
set_property(TEST integration.unwind_copy APPEND PROPERTY ENVIRONMENT
  NOFP=$<TARGET_FILE:bpfprof_workload_nofp>)
# ... but not in a file whose table will never come (no CFI).
bpfprof_integration_test(unwind_copy_nocfi 120 TRUE unwind.sh cfi nocfi)
set_property(TEST integration.unwind_copy_nocfi APPEND PROPERTY ENVIRONMENT
  NOFP=$<TARGET_FILE:bpfprof_workload_nofp>)
# Short-lived processes under -a (issue 26): 100 exec'd copies of shortburn.
add_executable(bpfprof_workload_shortburn ${BPFPROF_TESTS_DIR}/workloads/shortburn.c)
set_target_properties(bpfprof_workload_shortburn PROPERTIES
  OUTPUT_NAME shortburn
  RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/workloads
  COMPILE_OPTIONS "-O2;-fomit-frame-pointer;-Wall;-Wextra"
  LINK_OPTIONS "")
foreach(mode cfi fp)
  bpfprof_integration_test(short_lived_${mode} 120 TRUE short_lived.sh ${mode})
  set_property(TEST integration.short_lived_${mode} APPEND PROPERTY ENVIRONMENT
    SHORTBURN=$<TARGET_FILE:bpfprof_workload_shortburn>)
endforeach()
# Thread churn (issue 37): 8 short threads started and joined in a loop, -O2
# without frame pointers against the system's glibc.
add_executable(bpfprof_workload_threadchurn ${BPFPROF_TESTS_DIR}/workloads/threadchurn.c)
set_target_properties(bpfprof_workload_threadchurn PROPERTIES
  OUTPUT_NAME threadchurn
  RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/workloads
  COMPILE_OPTIONS "-O2;-fomit-frame-pointer;-Wall;-Wextra"
  LINK_OPTIONS "")
target_link_libraries(bpfprof_workload_threadchurn PRIVATE pthread)
foreach(mode cfi fp)
  bpfprof_integration_test(unwind_churn_${mode} 120 TRUE unwind.sh ${mode} churn)
  set_property(TEST integration.unwind_churn_${mode} APPEND PROPERTY ENVIRONMENT
    THREADCHURN=$<TARGET_FILE:bpfprof_workload_threadchurn>)
endforeach()
# vfork, as make, sh and gcc spawn (issue 38): -O2 without frame pointers
# against the system's glibc, whose __vfork keeps its return address in RDI.
add_executable(bpfprof_workload_vforker ${BPFPROF_TESTS_DIR}/workloads/vforker.c)
set_target_properties(bpfprof_workload_vforker PROPERTIES
  OUTPUT_NAME vforker
  RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/workloads
  COMPILE_OPTIONS "-O2;-fomit-frame-pointer;-Wall;-Wextra"
  LINK_OPTIONS "")
bpfprof_integration_test(unwind_vfork 120 TRUE unwind.sh cfi vfork)
set_property(TEST integration.unwind_vfork APPEND PROPERTY ENVIRONMENT
  VFORKER=$<TARGET_FILE:bpfprof_workload_vforker>)
# Whole stacks on a build machine (issue 38): this tree built with make -j
# under bpfprof (gcc, binutils, make, sh, cmake, clang), and a lone gcc -O2 -c.
foreach(what make gcc)
  bpfprof_integration_test(build_stacks_${what} 1800 TRUE build_stacks.sh ${what})
endforeach()
# Python functions in the stacks (issue 26): Debian's python3 and pyfuncs.py;
# pool: every CPython installed, in one recording (issue 40).
foreach(mode before during fp pool)
  bpfprof_integration_test(python_${mode} 120 TRUE python.sh ${mode})
endforeach()
# PHP functions in the stacks (issue 40): Debian's php8.2 and phpfuncs.php.
bpfprof_integration_test(php 120 TRUE php.sh)
# Ruby methods in the stacks (issue 40): Debian's ruby and rbfuncs.rb.
bpfprof_integration_test(ruby 120 TRUE ruby.sh)
# Go (issue 26): programs built by Debian's golang-go at test time, unwound
# through .gopclntab (tests/workloads/go, go.sh); go_park: stacks on g0
# under runtime.mcall, across its switch in one step (issue 37).
foreach(mode go go_sw go_fp cgo cgo_pie go_park)
  bpfprof_integration_test(${mode} 180 TRUE go.sh ${mode})
endforeach()
# The same in C++: a virtual call under a recursion with an inlined hot loop,
# and exceptions thrown through libstdc++ and libgcc_s (no frame pointers
# either); -g for the inline frames.
enable_language(CXX)
add_executable(bpfprof_workload_nofp_cpp ${BPFPROF_TESTS_DIR}/workloads/nofp_cpp.cpp)
set_target_properties(bpfprof_workload_nofp_cpp PROPERTIES
  OUTPUT_NAME nofp_cpp
  RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/workloads
  COMPILE_OPTIONS "-O2;-g;-fomit-frame-pointer;-Wall;-Wextra"
  LINK_OPTIONS "")
bpfprof_integration_test(unwind_cpp 120 TRUE unwind.sh cfi cpp)
# Debian's python3 as packaged (tests/workloads/pyloop.py).
bpfprof_integration_test(unwind_python 120 TRUE unwind.sh cfi python)
set_property(TEST integration.unwind_cpp APPEND PROPERTY ENVIRONMENT
  NOFP_CPP=$<TARGET_FILE:bpfprof_workload_nofp_cpp>)
add_test(NAME integration.check_selftest_unwind
  COMMAND ${BPFPROF_NODE} --test ${BPFPROF_TESTS_DIR}/check/selftest_unwind.mjs)
set_tests_properties(integration.check_selftest_unwind PROPERTIES
  LABELS "integration;checker"
  TIMEOUT ${BPFPROF_SELFTEST_TIMEOUT}
  FIXTURES_REQUIRED bpfprof_check_npm
  ENVIRONMENT "CHECK_NODE_MODULES=${BPFPROF_CHECK_BUILD_DIR}/node_modules")

# Source lines, inline frames and separate debug files (issue 4, DWARF): the
# debuginfo workload at -O2 -g, where its hot function really is inlined, run
# as a stripped copy whose names exist only in the .debug file, which the
# test installs under /usr/lib/debug/.build-id for the run. No debug link is
# added: the build-id is the way the file must be found.
add_executable(bpfprof_workload_debuginfo ${BPFPROF_TESTS_DIR}/workloads/debuginfo.c)
set_target_properties(bpfprof_workload_debuginfo PROPERTIES
  OUTPUT_NAME debuginfo.full
  RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/workloads
  COMPILE_OPTIONS "-O2;-g;-fno-omit-frame-pointer;-Wall;-Wextra"
  LINK_OPTIONS "-Wl,--build-id=sha1")
set(BPFPROF_DEBUGINFO_DIR ${CMAKE_BINARY_DIR}/workloads)
add_custom_command(TARGET bpfprof_workload_debuginfo POST_BUILD
  COMMAND ${CMAKE_OBJCOPY} --only-keep-debug $<TARGET_FILE:bpfprof_workload_debuginfo>
          ${BPFPROF_DEBUGINFO_DIR}/debuginfo.debug
  COMMAND ${CMAKE_STRIP} --strip-all -o ${BPFPROF_DEBUGINFO_DIR}/debuginfo
          $<TARGET_FILE:bpfprof_workload_debuginfo>
  VERBATIM)
bpfprof_integration_test(debuginfo 120 TRUE debuginfo.sh)
# Names for stripped code from a debuginfod server started by the test, and
# from MiniDebugInfo; the workload is built by the test (it strips and
# rewrites the library).
bpfprof_integration_test(debuginfod 180 TRUE debuginfod.sh)
set_property(TEST integration.debuginfo APPEND PROPERTY ENVIRONMENT
  DEBUGINFO_STRIPPED=${BPFPROF_DEBUGINFO_DIR}/debuginfo
  DEBUGINFO_DEBUG=${BPFPROF_DEBUGINFO_DIR}/debuginfo.debug
  DEBUGINFO_SOURCE=${BPFPROF_TESTS_DIR}/workloads/debuginfo.c)

# Syscall markers (issue 5): the syscaller workload at the default 1 ms
# threshold, without syscall capture, and at threshold 0 (every syscall a
# marker); and the syscall checker's own test on hand-made profiles.
bpfprof_integration_test(syscalls_default 90 TRUE syscalls.sh default)
bpfprof_integration_test(syscalls_held 90 TRUE syscalls.sh held)
bpfprof_integration_test(syscalls_ktime_clock 90 TRUE syscalls.sh ktime_clock)
bpfprof_integration_test(syscalls_all 90 TRUE syscalls.sh all)
bpfprof_integration_test(syscalls_no_syscalls 90 TRUE syscalls.sh no_syscalls)
bpfprof_integration_test(syscalls_min0 90 TRUE syscalls.sh min0)
add_test(NAME integration.check_selftest_syscall_wait
  COMMAND ${BPFPROF_NODE} --test ${BPFPROF_TESTS_DIR}/check/selftest_syscall_wait.mjs)
set_tests_properties(integration.check_selftest_syscall_wait PROPERTIES
  LABELS "integration;checker"
  TIMEOUT ${BPFPROF_SELFTEST_TIMEOUT}
  FIXTURES_REQUIRED bpfprof_check_npm
  ENVIRONMENT "CHECK_NODE_MODULES=${BPFPROF_CHECK_BUILD_DIR}/node_modules")
add_test(NAME integration.check_selftest_syscalls
  COMMAND ${BPFPROF_NODE} --test ${BPFPROF_TESTS_DIR}/check/selftest_syscalls.mjs)
set_tests_properties(integration.check_selftest_syscalls PROPERTIES
  LABELS "integration;checker"
  TIMEOUT ${BPFPROF_SELFTEST_TIMEOUT}
  FIXTURES_REQUIRED bpfprof_check_npm
  ENVIRONMENT "CHECK_NODE_MODULES=${BPFPROF_CHECK_BUILD_DIR}/node_modules")

# The cgroup filter (issue 6): `bpfprof -a --cgroup` while processes fork
# inside a test cgroup, move in and out of its child cgroup, and burn outside
# it; with the default programs, forced raw_tp programs, and tp_btf programs
# without the bpf_task_under_cgroup kfunc. The checker's own test on
# hand-made profiles; and the CLI's errors for bad --cgroup arguments.
bpfprof_integration_test(cgroup_default 300 TRUE cgroup.sh default)
bpfprof_integration_test(cgroup_raw_tp 300 TRUE cgroup.sh raw_tp)
bpfprof_integration_test(cgroup_no_kfunc 300 TRUE cgroup.sh no_kfunc)
add_test(NAME integration.check_selftest_cgroup
  COMMAND ${BPFPROF_NODE} --test ${BPFPROF_TESTS_DIR}/check/selftest_cgroup.mjs)
set_tests_properties(integration.check_selftest_cgroup PROPERTIES
  LABELS "integration;checker"
  TIMEOUT ${BPFPROF_SELFTEST_TIMEOUT}
  FIXTURES_REQUIRED bpfprof_check_npm
  ENVIRONMENT "CHECK_NODE_MODULES=${BPFPROF_CHECK_BUILD_DIR}/node_modules")
foreach(case cgroup_missing cgroup_missing_relative cgroup_empty cgroup_not_v2 cgroup_v1 cgroup_file
             cgroup_with_pid cgroup_with_command cgroup_too_many)
  bpfprof_integration_test(error.${case} 60 FALSE error_case.sh ${case})
endforeach()

# Continuous mode (issue 7): consecutive snapshots that touch and each load,
# a partial one on SIGTERM, SIGHUP rotation, and the retention by count and
# by size; snapshots in pprof and both formats (issue 19).
foreach(mode gapless retention max_bytes sighup pprof slow_writer blocked)
  bpfprof_integration_test(continuous_${mode} 120 TRUE continuous.sh ${mode})
endforeach()
add_test(NAME integration.check_selftest_continuous
  COMMAND ${BPFPROF_NODE} --test ${BPFPROF_TESTS_DIR}/check/selftest_continuous.mjs)
set_tests_properties(integration.check_selftest_continuous PROPERTIES
  LABELS "integration;checker"
  TIMEOUT ${BPFPROF_SELFTEST_TIMEOUT}
  FIXTURES_REQUIRED bpfprof_check_npm
  ENVIRONMENT "CHECK_NODE_MODULES=${BPFPROF_CHECK_BUILD_DIR}/node_modules")
foreach(case continuous_with_duration continuous_with_command continuous_keep_and_max_bytes
             continuous_bad_interval continuous_bad_max_bytes continuous_out_dir_is_file
             record_with_interval record_with_listen listen_bad_address listen_port_in_use
             listen_token_missing listen_tls_not_pem label_bad label_reserved label_twice
             label_without_listen)
  bpfprof_integration_test(error.${case} 60 FALSE error_case.sh ${case})
endforeach()

# The Debian package and its systemd service (packaging/): build the .deb,
# check its contents, dpkg -i, the installed unit under a real systemd in a
# sandbox where the host is read-only, dpkg --purge leaving nothing behind.
# About 95 s on an idle machine of this kind (a 25 s build, three 6 s
# snapshots, six loads of a 190-process profile): the timeout only catches a
# hang, at three times that.
bpfprof_integration_test(package_deb 300 TRUE package_deb.sh)

# A local user's program whose one FDE has 300k CFI rows, or more than the
# budget (issue 27): built in <= 1 s off the draining thread, no sample lost,
# or frame pointers for that file, said once per file identity (touched
# during the recording, run twice).
foreach(mode long_fde over_budget)
  bpfprof_integration_test(hostile_unwind_${mode} 180 TRUE hostile_unwind.sh ${mode})
endforeach()
# A local user whose program asks for a stack copy at every sample, on
# every CPU, leaves root's program the copies its first stacks need: a user
# copies at most half of each CPU's budget (issue 38, S2/S5 review finding 8).
bpfprof_integration_test(hostile_copies_hog 120 TRUE hostile_copies.sh hog)
# A local user against the unwind table cache (issue 38): its link or
# directory at the state path is never used; its copy of a system binary,
# same build-id and size, crafted, never gives that binary its table.
foreach(mode dir class)
  bpfprof_integration_test(hostile_unwind_cache_${mode} 120 TRUE hostile_unwind_cache.sh ${mode})
  set_property(TEST integration.hostile_unwind_cache_${mode} APPEND PROPERTY ENVIRONMENT
    NOFP=$<TARGET_FILE:bpfprof_workload_nofp>)
endforeach()

# One user's flood of processes or of unwind rows leaves another user's
# programs their CFI and Python frames (issue 37, findings 7 and 8): per-user
# shares of the per-process maps and of the row store; a shared file refused
# for one user's share is another's with room; a file sampled while refused
# gets room, files never sampled evicted first; a user's files hold a
# quarter of the BPF file maps' entries; a table another user ran a moment
# ago is not evicted for a user who never runs it (issue 38).
foreach(mode procs rows shared evict files protect)
  bpfprof_integration_test(hostile_shares_${mode} 240 TRUE hostile_shares.sh ${mode})
endforeach()
# The floods spread over the attacker's subordinate uids (/etc/subuid): one
# user, one share (issue 37).
foreach(mode procs rows)
  bpfprof_integration_test(hostile_shares_${mode}_subuids 240 TRUE hostile_shares.sh ${mode} subuids)
endforeach()

# continuous --listen as a scrape target (issue 30): two scrapers at once
# (curl and go tool pprof) each get whole windows across snapshot cuts,
# checked with Google's pprof library; labels; /snapshot/latest loads; the
# refusals; a token over TLS, and the off-CPU profile; another user's
# connection flood; another user's requests that hang up at once take no
# window, and a window whose client hung up is cancelled; the README's token
# recipe leaks nothing to a watching user, and another user's token file is
# refused (issue 37); a snapshot's slow symbolization neither stops the
# rings' draining nor holds a scrape's answer (issue 37).
foreach(mode scrapers token flood hangup token_file slow_symbols)
  bpfprof_integration_test(scrape_${mode} 120 TRUE scrape.sh ${mode})
endforeach()
