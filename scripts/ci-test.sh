#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# The whole CI run, and what a developer runs to reproduce it: install the
# build and test dependencies, configure, build on every core, run ctest;
# then the same with AddressSanitizer and UndefinedBehaviorSanitizer for the
# unit tests and a representative set of integration tests (a system-wide
# recording, continuous cuts and the writer thread, a cgroup, overload, a
# huge perf map, report and pprof, the scrape server, a hung-up scraper and
# a snapshot symbolized slowly off the poll thread,
# the Python reader threads on a stalled page), which must be clean (any report aborts
# its test); then each fuzz target for a short time (tests/fuzz).
# Exits non-zero if any stage failed.  Must run as root (apt, and the
# integration tests load BPF programs).

set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."

echo "ci-test: installing dependencies"
./scripts/install-deps.sh --test

echo "ci-test: configuring"
cmake -B build -S . -DCMAKE_BUILD_TYPE=RelWithDebInfo

echo "ci-test: building with $(nproc) jobs"
cmake --build build -j "$(nproc)"

status=0
echo "ci-test: testing"
# -j: the unit tests, the error cases and the checkers' self-tests overlap;
# every test that records runs alone (RUN_SERIAL), as a profile of the whole
# machine would see the others.
ctest --test-dir build --output-on-failure -j "$(nproc)" || status=1

echo "ci-test: the sanitizer build (ASan + UBSan)"
cmake -B build-asan -S . -DCMAKE_BUILD_TYPE=RelWithDebInfo -DBPFPROF_SANITIZE=ON
cmake --build build-asan -j "$(nproc)"
sanitized='^unit\.|^integration\.(record_all|continuous_gapless|continuous_slow_writer|cgroup_default|overload|hostile_perfmap_huge|report|pprof|view|initial_view_blocked|scrape_scrapers|scrape_token|scrape_hangup|scrape_slow_symbols|hostile_python_fuse_stall|hostile_python_fuse_release)$'
ASAN_OPTIONS=detect_leaks=1:abort_on_error=0 UBSAN_OPTIONS=print_stacktrace=1 \
	ctest --test-dir build-asan --output-on-failure -j "$(nproc)" -R "$sanitized" || status=1

# 10 s each: the run has to fit in 30 minutes with every target (19 of
# them, two at a time); each replays its seeds and every input that once
# crashed first, and a deeper run is scripts/fuzz.sh 600.
echo "ci-test: fuzzing each parser of outside data for 10 s (tests/fuzz)"
./scripts/fuzz.sh 10 || status=1

exit "$status"
