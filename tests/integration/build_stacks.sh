#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
#
# Whole stacks on a build machine (issue 38): this project's own tree,
# cloned and configured (not measured), built under
# `bpfprof -- make -C build -j$(nproc)` (gcc's cc1, as, ld and collect2,
# make, sh and cmake, clang-16 for the BPF objects); then a lone
# `gcc -O2 -c` of one file. build_checks.mjs groups the processes by what
# they are and asks of every group with 300 on-CPU user stacks or more in
# that profile that 95 % reach a thread root with every frame named; of the
# lone gcc, that cc1 has 100 stacks at least and 95 % of them whole. Each
# run keeps its unwind tables in a state directory of its own: cold, as on
# a new machine. bpfprof's peak RSS (its -v summary) is stated and bounded.
#
#   build_stacks.sh make|gcc
. "$(dirname "$0")/common.sh"
require_root
make_workdir

WHAT=${1:?usage: build_stacks.sh make|gcc}
SRC=$(cd "$(dirname "$0")/../.." && pwd)
# What bpfprof holds at most: its unwind store (32 MiB), its symbol caches
# (bounded at 256 MiB), the model of a few thousand processes; the bound is
# theirs with room, not a measurement of this machine.
RSS_MAX_MIB=512

for tool in gcc make cmake git; do
	command -v "$tool" >/dev/null || fail "$tool is missing: scripts/install-deps.sh --test installs it"
done
log "\$ git clone --local $SRC $WORK/tree"
git clone -q --local --no-hardlinks "$SRC" "$WORK/tree" || fail "could not clone $SRC"
TREE=$WORK/tree

peak_rss() {
	local rss
	# "bpfprof peak RSS 176.4 MiB" (or KiB, GiB): in MiB.
	rss=$(grep -o 'bpfprof peak RSS [0-9.]* [KMG]iB' "$WORK/bpfprof.err" | tail -n 1 |
		awk '{ v = $4; if ($5 == "KiB") v /= 1024; if ($5 == "GiB") v *= 1024; print v }')
	[ -n "$rss" ] || fail "bpfprof -v did not state its peak RSS"
	awk -v r="$rss" -v m="$RSS_MAX_MIB" 'BEGIN { exit !(r <= m) }' ||
		fail "bpfprof's peak RSS $rss MiB is over $RSS_MAX_MIB MiB"
	ok "bpfprof's peak RSS: $rss MiB (bound $RSS_MAX_MIB MiB)"
}

if [ "$WHAT" = gcc ]; then
	run_bpfprof 120 -v -F 4999 --state-dir "$WORK/state" -o "$WORK/build.json.gz" -- \
		gcc -O2 -I"$TREE/userspace" -c "$TREE/userspace/model/sched.c" -o "$WORK/sched.o"
	expect_success
	log "$(grep -m 1 '^bpfprof: user stacks: ' "$WORK/bpfprof.err")"
	peak_rss
	node_check build_checks.mjs --profile "$WORK/build.json.gz" --gzip --min-group 100 \
		--need compilers:100 || fail "build checks failed"
	exit 0
fi

[ "$WHAT" = make ] || fail "usage: build_stacks.sh make|gcc"
command -v clang >/dev/null || command -v clang-16 >/dev/null || command -v clang-14 >/dev/null ||
	fail "clang is missing: scripts/install-deps.sh installs it"
log "\$ cmake -B build -S . (in $TREE, not recorded)"
(cd "$TREE" && cmake -B build -S . -DCMAKE_BUILD_TYPE=RelWithDebInfo >"$WORK/cmake.log" 2>&1) ||
	fail "cmake could not configure the tree: $(tail -n 5 "$WORK/cmake.log")"
run_bpfprof 1800 -v --state-dir "$WORK/state" -o "$WORK/build.json.gz" -- \
	make -C "$TREE/build" -j"$(nproc)"
expect_success
log "$(grep -m 1 '^bpfprof: user stacks: ' "$WORK/bpfprof.err")"
peak_rss
node_check build_checks.mjs --profile "$WORK/build.json.gz" --gzip --need compilers:300 ||
	fail "build checks failed"
