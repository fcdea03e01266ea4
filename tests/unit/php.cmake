# PHP frames (issue 40): naming functions (lang/php_names.c, lang/php_procs.c)
# from a made-up memory, and the layouts (lang/php_layout.c) against
# Debian's php8.2 and its own headers (php8.2-dev), where installed.
set(PHP_TEST_DIR ${CMAKE_CURRENT_LIST_DIR})
bpfprof_unit_test(test_php_names ${PHP_TEST_DIR}/test_php_names.c)

find_program(BPFPROF_PHP php8.2 PATHS /usr/bin NO_DEFAULT_PATH)
set(BPFPROF_PHP_INCLUDE /usr/include/php/20220829)
if(BPFPROF_PHP AND EXISTS ${BPFPROF_PHP_INCLUDE}/Zend/zend_globals.h)
  bpfprof_unit_test(test_php_layout ${PHP_TEST_DIR}/test_php_layout.c)
  target_include_directories(test_php_layout PRIVATE ${BPFPROF_PHP_INCLUDE}
    ${BPFPROF_PHP_INCLUDE}/main ${BPFPROF_PHP_INCLUDE}/Zend ${BPFPROF_PHP_INCLUDE}/TSRM)
  target_compile_definitions(test_php_layout PRIVATE PHP_BINARY="${BPFPROF_PHP}")
else()
  message(WARNING "no ${BPFPROF_PHP_INCLUDE}/Zend/zend_globals.h or /usr/bin/php8.2 (php8.2-dev, php8.2-cli): test_php_layout is not built")
endif()
