# Ruby frames (issue 40): line tables (lang/ruby_lines.c), naming iseqs
# (lang/ruby_procs.c) and reading libruby (lang/ruby_layout.c).
bpfprof_unit_test(test_ruby_procs ${CMAKE_CURRENT_LIST_DIR}/test_ruby_procs.c)

# The object layouts against ruby-dev's headers, which install-deps --test installs.
set(BPFPROF_RUBY_INCLUDE /usr/include/ruby-3.1.0)
set(BPFPROF_RUBY_ARCH_INCLUDE /usr/include/x86_64-linux-gnu/ruby-3.1.0)
if(EXISTS ${BPFPROF_RUBY_INCLUDE}/ruby.h AND EXISTS ${BPFPROF_RUBY_ARCH_INCLUDE}/ruby/config.h)
  bpfprof_unit_test(test_ruby_layout ${CMAKE_CURRENT_LIST_DIR}/test_ruby_layout.c)
  target_include_directories(test_ruby_layout PRIVATE ${BPFPROF_RUBY_INCLUDE} ${BPFPROF_RUBY_ARCH_INCLUDE})
else()
  message(WARNING "no Ruby 3.1 headers (${BPFPROF_RUBY_INCLUDE}/ruby.h, ruby-dev): test_ruby_layout is not built")
endif()
