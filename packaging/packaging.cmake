# SPDX-License-Identifier: BSD-2-Clause
#
# Installation beyond the binary, and the Debian package:
#
#   cmake --build build --target package   ->   build/bpfprof_<version>_<arch>.deb
#
# The package holds /usr/bin/bpfprof (the BPF object is inside it, through the
# skeleton), its man page, the systemd unit of `bpfprof continuous`, the
# unit's options in /etc/default/bpfprof (a conffile) and an opt-in drop-in
# for `--listen` in /usr/share/bpfprof. The unit creates
# /var/lib/bpfprof itself (StateDirectory=); the maintainer scripts in
# packaging/debian never start the service, and purge deletes the snapshots.
# Included at the end of the top-level CMakeLists.txt, after install(TARGETS).

set(BPFPROF_PACKAGING_DIR ${CMAKE_CURRENT_LIST_DIR})

# --- Man page -----------------------------------------------------------------
# gzip -n: no name or time stamp inside, so the same page packs the same bytes.
find_program(BPFPROF_GZIP gzip REQUIRED)
set(BPFPROF_MAN_GZ ${CMAKE_BINARY_DIR}/packaging/bpfprof.1.gz)
add_custom_command(
  OUTPUT ${BPFPROF_MAN_GZ}
  COMMAND ${CMAKE_COMMAND} -E make_directory ${CMAKE_BINARY_DIR}/packaging
  COMMAND ${BPFPROF_GZIP} -9 -n -c ${BPFPROF_PACKAGING_DIR}/bpfprof.1 > ${BPFPROF_MAN_GZ}
  DEPENDS ${BPFPROF_PACKAGING_DIR}/bpfprof.1
  COMMENT "Compressing the man page"
  VERBATIM)
add_custom_target(bpfprof_man ALL DEPENDS ${BPFPROF_MAN_GZ})

# --- Installed files ----------------------------------------------------------
# Debug info out, symbols kept: an always-on profiler shows up in its own
# profiles, and its own frames should be named there too.
if(CMAKE_OBJCOPY)
  install(CODE "
    set(bin \"\$ENV{DESTDIR}\${CMAKE_INSTALL_PREFIX}/bin/bpfprof\")
    execute_process(COMMAND \"${CMAKE_OBJCOPY}\" --strip-debug \"\${bin}\" RESULT_VARIABLE rc)
    if(NOT rc EQUAL 0)
      message(FATAL_ERROR \"objcopy --strip-debug \${bin} failed (\${rc})\")
    endif()")
endif()
install(FILES ${BPFPROF_MAN_GZ} DESTINATION share/man/man1)
# The unit and its options live outside the prefix: systemd and the admin
# look for them there (Debian 12 keeps packaged units in /lib/systemd/system).
# So they belong to the package only, as component "service": a plain
# `cmake --install` (any --prefix) never writes /etc or /lib.
install(FILES ${BPFPROF_PACKAGING_DIR}/bpfprof.service DESTINATION /lib/systemd/system
        COMPONENT service EXCLUDE_FROM_ALL)
install(FILES ${BPFPROF_PACKAGING_DIR}/bpfprof.default DESTINATION /etc/default RENAME bpfprof
        COMPONENT service EXCLUDE_FROM_ALL)
# The opt-in drop-in for `--listen`: shipped where nothing reads it; the admin
# copies it to /etc/systemd/system/bpfprof.service.d/ to serve scrapers.
install(FILES ${BPFPROF_PACKAGING_DIR}/listen.conf DESTINATION share/bpfprof
        COMPONENT service EXCLUDE_FROM_ALL)

# --- Debian package (CPack) ---------------------------------------------------
set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME bpfprof)
# One package from both components: the default one (binary, man page) and
# "service".
set(CPACK_DEB_COMPONENT_INSTALL ON)
set(CPACK_COMPONENTS_ALL Unspecified service)
set(CPACK_COMPONENTS_GROUPING ALL_COMPONENTS_IN_ONE)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT) # bpfprof_<version>_<arch>.deb
set(BPFPROF_DEB_MAINTAINER "bpfprof developers <bpfprof@localhost>"
    CACHE STRING "Maintainer field of the Debian package")
set(CPACK_DEBIAN_PACKAGE_MAINTAINER ${BPFPROF_DEB_MAINTAINER})
set(CPACK_DEBIAN_PACKAGE_SECTION devel)
set(CPACK_DEBIAN_PACKAGE_PRIORITY optional)
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY
    "system-wide eBPF sampling profiler for the Firefox Profiler")
# The lines of the control file's description: CPack indents them and marks the
# empty one as a paragraph break.
string(CONCAT CPACK_PACKAGE_DESCRIPTION
  "bpfprof samples every process and thread of the machine with eBPF, kernel\n"
  "and user stacks, and writes profiles that open directly in the Firefox\n"
  "Profiler, already symbolicated.\n"
  "\n"
  "`bpfprof record` profiles for a while. `bpfprof continuous`, also run by\n"
  "the bpfprof systemd service (not started on installation), writes one\n"
  "profile per interval and deletes the oldest.")

# Depends: dpkg-shlibdeps derives the libraries and their minimum versions
# from the binary itself; without it, the Debian 12 names of every library
# bpfprof links (libiberty is static).
find_program(BPFPROF_DPKG_SHLIBDEPS dpkg-shlibdeps)
if(BPFPROF_DPKG_SHLIBDEPS)
  set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
else()
  set(CPACK_DEBIAN_PACKAGE_DEPENDS "libc6, libbpf1, libelf1, libdw1, zlib1g")
  if(LZMA_FOUND)
    string(APPEND CPACK_DEBIAN_PACKAGE_DEPENDS ", liblzma5")
  endif()
endif()

# Opened at run time when DEBUGINFOD_URLS is set (symbols/debuginfo_server.c).
set(CPACK_DEBIAN_PACKAGE_RECOMMENDS "libdebuginfod1")

set(CPACK_DEBIAN_PACKAGE_CONTROL_EXTRA
    ${BPFPROF_PACKAGING_DIR}/debian/conffiles
    ${BPFPROF_PACKAGING_DIR}/debian/postinst
    ${BPFPROF_PACKAGING_DIR}/debian/prerm
    ${BPFPROF_PACKAGING_DIR}/debian/postrm)
# 0755 scripts and a 0644 conffiles list, whatever the checkout's modes.
set(CPACK_DEBIAN_PACKAGE_CONTROL_STRICT_PERMISSION TRUE)

include(CPack)
