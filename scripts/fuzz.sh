#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
#
# Build the libFuzzer targets of tests/fuzz with clang (ASan + UBSan) into
# build-fuzz/ and run each for SECONDS (default 20), as many at once as
# there are CPUs, starting from the seeds in tests/fuzz/corpus/TARGET (which
# also hold every input that once crashed: each run replays them first).
# Prints each target's executions; exits non-zero if any target crashed,
# leaked or timed out, and leaves the input in build-fuzz/artifacts/TARGET/
# (add it to tests/fuzz/corpus/TARGET once fixed).
#
# Usage: scripts/fuzz.sh [SECONDS] [TARGET...]
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

seconds=${1:-20}
shift || true
[[ $seconds =~ ^[0-9]+$ ]] || { echo "usage: scripts/fuzz.sh [SECONDS] [TARGET...]" >&2; exit 2; }

mkdir -p build-fuzz
CC=clang cmake -B build-fuzz -S . -DBPFPROF_FUZZ=ON -DBPFPROF_TESTS=OFF \
	-DCMAKE_BUILD_TYPE=RelWithDebInfo >build-fuzz/build.log 2>&1 || { cat build-fuzz/build.log; exit 1; }
cmake --build build-fuzz -j "$(nproc)" --target fuzzers >>build-fuzz/build.log 2>&1 || { tail -n 30 build-fuzz/build.log; exit 1; }

targets=("$@")
[ ${#targets[@]} -gt 0 ] || mapfile -t targets < <(cd tests/fuzz && ls fuzz_*.c | sed 's/\.c$//')

run_one() {
	local t=$1 work=build-fuzz/corpus/$1 art=build-fuzz/artifacts/$1/
	mkdir -p "$work" "$art"
	# The work corpus grows; the seeds in the repository are only read.
	# Leaks inside libraries that hand us nothing to free (tests/fuzz/lsan.supp says which),
	# matched by function: libdw has no frame pointers, so fuzz_elf, its one user, gets the
	# slow unwinder on malloc, which names the frames (the fast one stops at libdw's first).
	local asan=${ASAN_OPTIONS:-}
	[ "$t" = fuzz_elf ] && asan=${asan:+$asan:}fast_unwind_on_malloc=0
	ASAN_OPTIONS=$asan LSAN_OPTIONS=suppressions=tests/fuzz/lsan.supp:print_suppressions=0 \
		"build-fuzz/$t" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
			-artifact_prefix="$art" "$work" "tests/fuzz/corpus/$t" >"build-fuzz/$t.log" 2>&1
}

status=0
running=0
declare -A pids
for t in "${targets[@]}"; do
	run_one "$t" &
	pids[$t]=$!
	running=$((running + 1))
	if [ "$running" -ge "$(nproc)" ]; then
		wait -n || true
		running=$((running - 1))
	fi
done
for t in "${targets[@]}"; do
	if wait "${pids[$t]}"; then
		res=ok
	else
		res=FAILED
		status=1
	fi
	execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "build-fuzz/$t.log" | tail -n 1 || true)
	cov=$(grep -o 'cov: [0-9]*' "build-fuzz/$t.log" | tail -n 1 || true)
	printf 'fuzz: %-20s %-6s %10s runs in %s s, %s\n' "$t" "$res" "${execs:-?}" "$seconds" "${cov:-cov: ?}"
	if [ "$res" = FAILED ]; then
		grep -E 'ERROR|runtime error|SUMMARY|Test unit written' "build-fuzz/$t.log" | head -n 8 | sed 's/^/    /' || true
	fi
done
exit "$status"
