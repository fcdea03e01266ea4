#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
#
# build_stacks.sh: what bpfprof costs a build and what it gets of its stacks
# (issue 38). This tree, cloned and configured once, is built from clean
# with `make -j N` (gcc, binutils, make, sh, cmake, clang for the BPF
# objects), interleaved, round after round:
#
#   alone    make by itself
#   new      under `bpfprof -v -- make` (--bpfprof, default ./build/bpfprof),
#            each run with a state directory of its own: cold, as on a new
#            machine (no table from the cache)
#   old      under another bpfprof, when --old PATH names one (say, one
#            built at the commit before issue 38), with the same options
#            it knows: -v -o FILE -- make
#
# It prints each run's wall time, then the medians and each profiler's
# ratio to make alone; of each bpfprof run its stack-quality line, its
# unwind store and stack copies lines and its peak RSS; and, when node and
# tests/check's modules are there, the share of whole stacks per group of
# processes (tests/check/build_checks.mjs). A benchmark, not a test: it
# asserts nothing.
#
# Usage: sudo bench/build_stacks.sh [--rounds N] [--jobs N] [--bpfprof PATH] [--old PATH]

set -u -o pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
SRC=$(cd "$HERE/.." && pwd)
ROUNDS=3 JOBS=$(nproc) BPFPROF=./build/bpfprof OLD=
while [ $# -gt 0 ]; do
	case $1 in
	--rounds) ROUNDS=$2; shift 2 ;;
	--jobs) JOBS=$2; shift 2 ;;
	--bpfprof) BPFPROF=$2; shift 2 ;;
	--old) OLD=$2; shift 2 ;;
	*) echo "usage: $0 [--rounds N] [--jobs N] [--bpfprof PATH] [--old PATH]" >&2; exit 2 ;;
	esac
done
[ "$(id -u)" = 0 ] || { echo "build_stacks.sh: run as root" >&2; exit 1; }
BPFPROF=$(readlink -f "$BPFPROF")
[ -x "$BPFPROF" ] || { echo "build_stacks.sh: no bpfprof at $BPFPROF: build it first" >&2; exit 1; }
[ -z "$OLD" ] || OLD=$(readlink -f "$OLD")
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
git clone -q --local --no-hardlinks "$SRC" "$WORK/tree" || { echo "build_stacks.sh: cannot clone $SRC" >&2; exit 1; }
(cd "$WORK/tree" && cmake -B build -S . -DCMAKE_BUILD_TYPE=RelWithDebInfo >"$WORK/cmake.log" 2>&1) ||
	{ echo "build_stacks.sh: cmake failed: $(tail -n 3 "$WORK/cmake.log")" >&2; exit 1; }

# run KIND ROUND: one clean build; appends "KIND SECONDS" to $WORK/times.
run() {
	local kind=$1 round=$2 t0 t1 cmd=(make -C "$WORK/tree/build" -j"$JOBS")

	make -C "$WORK/tree/build" clean >/dev/null 2>&1
	sync
	t0=$(date +%s%N)
	case $kind in
	alone) "${cmd[@]}" >/dev/null 2>&1 ;;
	new) "$BPFPROF" -v --state-dir "$WORK/state-$round" -o "$WORK/$kind-$round.json.gz" -- "${cmd[@]}" \
		>/dev/null 2>"$WORK/$kind-$round.err" ;;
	old) "$OLD" -v -o "$WORK/$kind-$round.json.gz" -- "${cmd[@]}" >/dev/null 2>"$WORK/$kind-$round.err" ;;
	esac
	t1=$(date +%s%N)
	awk -v k="$kind" -v a="$t0" -v b="$t1" 'BEGIN { printf "%s %.2f\n", k, (b - a) / 1e9 }' |
		tee -a "$WORK/times"
}

kinds=(alone new)
[ -z "$OLD" ] || kinds+=(old)
for ((r = 1; r <= ROUNDS; r++)); do
	for k in "${kinds[@]}"; do
		echo -n "round $r: "
		run "$k" "$r"
	done
done

median() { sort -n | awk '{ v[NR] = $1 } END { print NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
alone=$(awk '$1 == "alone" { print $2 }' "$WORK/times" | median)
echo
echo "make -j$JOBS of this tree, $ROUNDS rounds, medians:"
for k in "${kinds[@]}"; do
	m=$(awk -v k="$k" '$1 == k { print $2 }' "$WORK/times" | median)
	awk -v k="$k" -v m="$m" -v a="$alone" 'BEGIN { printf "  %-6s %7.2f s  %.3f of alone\n", k, m, m / a }'
done
for k in "${kinds[@]}"; do
	[ "$k" != alone ] || continue
	echo
	echo "$k, round $ROUNDS:"
	grep -E '^bpfprof: (user stacks|unwind store|stack copies):' "$WORK/$k-$ROUNDS.err" | cut -c1-400 | sed 's/^/  /'
	grep -o 'bpfprof peak RSS [0-9.]* [KMG]iB' "$WORK/$k-$ROUNDS.err" | tail -n 1 | sed 's/^/  /'
	if command -v node >/dev/null; then
		node "$SRC/tests/check/build_checks.mjs" --profile "$WORK/$k-$ROUNDS.json.gz" --gzip 2>&1 |
			grep -E '^(ok|FAIL) +group [a-z]+: [0-9]+ of' | sed 's/^/  /'
	fi
done
