#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Install what bpfprof needs to build (and, with --test / --bench, to run its
# tests and benchmarks) on Debian 12 or Ubuntu, as root.  Idempotent: packages
# already installed are skipped, and when nothing is missing apt is not run at
# all, so a prepared machine needs no network.

set -euo pipefail

usage() {
	cat <<EOF
Usage: $0 [--test] [--bench]

Installs, with apt-get, as root:
  always   build-essential cmake pkg-config clang llvm libbpf-dev libelf-dev
           libdw-dev zlib1g-dev libjansson-dev libiberty-dev linux-libc-dev
           libdebuginfod-dev liblzma-dev libmicrohttpd-dev libprotobuf-c-dev
           protobuf-c-compiler libcapstone-dev bpftool (linux-libc-dev: the
           syscall tables; libdebuginfod-dev: debug files from DEBUGINFOD_URLS;
           liblzma-dev: MiniDebugInfo; libmicrohttpd-dev: bpfprof view's HTTP
           server; protobuf-c: pprof output; libcapstone-dev: bpfprof view's
           assembly view), and clang-16 when no clang 15+ is
           installed (BTF type tags: --cgroup's kfunc path) (on Ubuntu
           bpftool comes from linux-tools-common and linux-tools-\$(uname -r))
  --test   util-linux procps python3 python3-dev systemd strace debuginfod
           xz-utils curl chromium golang-go golang-github-google-pprof-dev
           openssl fuse3 php8.2-cli php8.2-dev ruby ruby-dev (the view test fetches a profile from a headless
           page; the pprof and Go tests build and read Go programs, the scrape
           test checks answers with Google's pprof library over TLS; the
           Python layout test compiles against python3's own headers; a
           hostile Python test mounts a FUSE file system as a user with
           fusermount3; php8.2-cli php8.2-dev: the PHP test profiles
           Debian's php8.2, the PHP layout test compiles against its
           headers; ruby ruby-dev: the Ruby test profiles Debian's ruby,
           and its layout test compiles against ruby-dev's headers), and
           nodejs npm when node is missing or older than v18 (the integration
           tests run the profiler's npm CLI; the package test runs the service
           under systemd; the debuginfod test runs a local debuginfod server)
  --bench  linux-perf (Ubuntu: linux-tools-\$(uname -r))
EOF
}

step() {
	echo "install-deps: $*"
}

die() {
	echo "install-deps: error: $*" >&2
	exit 1
}

WITH_TEST=0
WITH_BENCH=0
for arg in "$@"; do
	case "$arg" in
	--test) WITH_TEST=1 ;;
	--bench) WITH_BENCH=1 ;;
	-h | --help) usage; exit 0 ;;
	*) usage >&2; die "unknown option '$arg'" ;;
	esac
done

[ "$(id -u)" -eq 0 ] || die "must run as root (try: sudo $0 $*)"
command -v apt-get >/dev/null || die "apt-get not found: only Debian and Ubuntu are supported"

export DEBIAN_FRONTEND=noninteractive
APT_QUIET=(-q -o Dpkg::Use-Pty=0)

installed() {
	# ${Status} is "want flag status", e.g. "install ok installed".
	[ "$(dpkg-query -W -f='${Status}' "$1" 2>/dev/null | awk '{ print $3 }')" = installed ]
}

# True when apt knows a package it could install (after apt-get update).
available() {
	local cand
	cand=$(apt-cache policy "$1" 2>/dev/null | awk '$1 == "Candidate:" { print $2 }')
	[ -n "$cand" ] && [ "$cand" != "(none)" ]
}

# Debian 12's clang is 14, which drops BTF type tags: --cgroup then tests
# other tasks' cgroups without the kernel's kfunc. CMake takes the newest clang.
have_clang15() {
	local c major
	for c in clang-19 clang-18 clang-17 clang-16 clang-15 clang; do
		command -v "$c" >/dev/null || continue
		major=$("$c" -dumpversion 2>/dev/null) || continue
		[ "${major%%.*}" -ge 15 ] && return 0
	done
	return 1
}

have_bpftool() {
	# Debian installs it in /usr/sbin, which a caller's PATH may lack.
	command -v bpftool >/dev/null 2>&1 || [ -x /usr/sbin/bpftool ]
}

node_major() {
	local v
	v=$(node --version 2>/dev/null) || return 1
	v=${v#v}
	echo "${v%%.*}"
}

PACKAGES=(build-essential cmake pkg-config clang llvm libbpf-dev libelf-dev
	libdw-dev zlib1g-dev libjansson-dev libiberty-dev linux-libc-dev libdebuginfod-dev liblzma-dev
	libmicrohttpd-dev libprotobuf-c-dev protobuf-c-compiler libcapstone-dev)
NEED_BPFTOOL=0
NEED_PERF=0
NEED_CLANG15=0
have_bpftool || NEED_BPFTOOL=1
have_clang15 || NEED_CLANG15=1

if [ "$WITH_TEST" = 1 ]; then
	PACKAGES+=(util-linux procps python3 python3-dev systemd strace debuginfod xz-utils curl chromium golang-go
		golang-github-google-pprof-dev openssl fuse3 php8.2-cli php8.2-dev ruby ruby-dev)
	major=$(node_major) || major=0
	if [ "$major" -lt 18 ]; then
		PACKAGES+=(nodejs npm)
	elif ! command -v npm >/dev/null; then
		PACKAGES+=(npm)
	fi
fi
if [ "$WITH_BENCH" = 1 ]; then
	command -v perf >/dev/null || NEED_PERF=1
fi

MISSING=()
for p in "${PACKAGES[@]}"; do
	installed "$p" || MISSING+=("$p")
done

if [ ${#MISSING[@]} -eq 0 ] && [ "$NEED_BPFTOOL" = 0 ] && [ "$NEED_PERF" = 0 ] &&
	[ "$NEED_CLANG15" = 0 ]; then
	step "all dependencies already installed"
	exit 0
fi

step "updating apt package lists"
apt-get "${APT_QUIET[@]}" -qq update || die "apt-get update failed (network or apt sources?)"

# Debian ships bpftool and perf as packages of their own; Ubuntu ships both
# in the kernel-versioned linux-tools packages.
KVER=$(uname -r)
if [ "$NEED_BPFTOOL" = 1 ]; then
	if available bpftool; then
		MISSING+=(bpftool)
	elif available "linux-tools-$KVER"; then
		MISSING+=(linux-tools-common "linux-tools-$KVER")
	elif available linux-tools-generic; then
		step "no linux-tools-$KVER for this kernel, using linux-tools-generic for bpftool"
		MISSING+=(linux-tools-common linux-tools-generic)
	else
		die "no package provides bpftool (tried bpftool, linux-tools-$KVER, linux-tools-generic)"
	fi
fi
if [ "$NEED_CLANG15" = 1 ]; then
	if available clang-16; then
		MISSING+=(clang-16)
	else
		step "no clang 15 or newer available: --cgroup will test other tasks' cgroups without the kfunc"
	fi
fi
if [ "$NEED_PERF" = 1 ]; then
	if available linux-perf; then
		MISSING+=(linux-perf)
	elif available "linux-tools-$KVER"; then
		MISSING+=(linux-tools-common "linux-tools-$KVER")
	else
		die "no package provides perf (tried linux-perf, linux-tools-$KVER)"
	fi
fi

# Dedupe: bpftool and perf may both have asked for linux-tools.
mapfile -t MISSING < <(printf '%s\n' "${MISSING[@]}" | awk '!seen[$0]++')
for p in "${MISSING[@]}"; do
	available "$p" || die "package '$p' is not available from the configured apt sources"
done

step "installing ${MISSING[*]}"
LOG=$(mktemp "${TMPDIR:-/tmp}/install-deps.XXXXXX")
trap 'rm -f "$LOG"' EXIT
# apt's progress is noise on success; on failure its last lines say why.
apt-get "${APT_QUIET[@]}" -y install "${MISSING[@]}" >"$LOG" 2>&1 ||
	{ tail -n 30 "$LOG" >&2; die "apt-get install failed"; }

# Fail here rather than half-way through a build.
have_bpftool || die "bpftool still missing after install"
if [ "$WITH_TEST" = 1 ]; then
	major=$(node_major) || major=0
	[ "$major" -ge 18 ] ||
		die "node v18 or newer is needed by the tests; this release ships v$major"
fi
if [ "$NEED_PERF" = 1 ]; then
	command -v perf >/dev/null || die "perf still missing after install"
fi
step "done"
