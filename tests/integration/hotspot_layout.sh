#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
#
# A JVM's own description of its structures (issue 39): for every JDK
# present (OpenJDK 17, Temurin 25; a missing one is named), a JVM running
# JitHot.java is read by hotspot_probe as bpfprof reads it: libjvm.so's
# gHotSpotVM* tables, the layout derived from them with no table per JDK
# build, and the code heaps that layout leads to. The JDK's release must
# be the one `java -version` says, and the heaps what a JVM has. Then the
# compiled code is named as a sample's would be: C2 inlines
# bpfprofJavaInner into bpfprofJavaMiddle, so some code of the middle
# method must be named "JitHot.bpfprofJavaInner:L <- JitHot.bpfprofJavaMiddle:M",
# L a line of the inner method's body and M the line of its call, both
# read from JitHot.java itself.
#
# HOTSPOT_PROBE comes from ctest; JAVA_HOT defaults to
# tests/workloads/JitHot.java next to this script.
. "$(dirname "$0")/common.sh"
require_root
make_workdir

: "${HOTSPOT_PROBE:?HOTSPOT_PROBE is not set}"
JAVA_HOT=${JAVA_HOT:-$(cd "$(dirname "$0")/../workloads" && pwd)/JitHot.java}
JVM_PID=
cleanup() {
	[ -n "$JVM_PID" ] && kill -KILL "$JVM_PID" 2>/dev/null
}
trap cleanup EXIT

# Where the methods are in the workload's own source.
INNER_FIRST=$(grep -n 'static long bpfprofJavaInner' "$JAVA_HOT" | cut -d: -f1)
INNER_END=$(grep -n 'static long bpfprofJavaMiddle' "$JAVA_HOT" | cut -d: -f1)
CALL_LINE=$(grep -n 'return bpfprofJavaInner(n) + 1;' "$JAVA_HOT" | cut -d: -f1)
[ -n "$INNER_FIRST" ] && [ -n "$INNER_END" ] && [ -n "$CALL_LINE" ] || fail "$JAVA_HOT is not the workload this test knows"

tested=()
for jdk in /usr/lib/jvm/java-17-openjdk-amd64 /usr/lib/jvm/temurin-25-jdk-amd64; do
	v=$(basename "$jdk")
	if [ ! -x "$jdk/bin/java" ]; then
		log "MISSING: $jdk is not installed here; its JVM is not tested"
		continue
	fi
	want=$("$jdk/bin/java" -version 2>&1 | sed -n 's/.*version "\([0-9]*\).*/\1/p' | head -n 1)
	[[ $want =~ ^[0-9]+$ ]] || fail "$v: java -version says no release: $("$jdk/bin/java" -version 2>&1 | head -n 1)"
	"$jdk/bin/java" "$JAVA_HOT" 60 >"$WORK/$v.out" 2>"$WORK/$v.err" &
	JVM_PID=$!
	for ((i = 0; i < 600; i++)); do
		[ -s "$WORK/$v.out" ] && break
		sleep 0.05
	done
	[ "$(head -n 1 "$WORK/$v.out")" = "$JVM_PID" ] || fail "$v: JitHot did not start: $(cat "$WORK/$v.err")"
	# Until C2 has compiled the middle method (with the inner one inlined): the probe says so.
	for ((i = 0; i < 120; i++)); do
		"$HOTSPOT_PROBE" "$JVM_PID" 2>/dev/null | grep -qE '^nmethod JitHot\.bpfprofJavaInner:[0-9]+ <- JitHot\.bpfprofJavaMiddle' && break
		sleep 0.5
	done
	log "\$ hotspot_probe $JVM_PID ($v)"
	"$HOTSPOT_PROBE" "$JVM_PID" >"$WORK/$v.probe" 2>&1
	status=$?
	sed 's/^/   /' "$WORK/$v.probe"
	[ "$status" -eq 0 ] || fail "$v: hotspot_probe failed (exit status $status)"
	chain=$(grep -m 1 -E '^nmethod JitHot\.bpfprofJavaInner:[0-9]+ <- JitHot\.bpfprofJavaMiddle:[0-9]+' "$WORK/$v.probe")
	[ -n "$chain" ] || fail "$v: no compiled code is named bpfprofJavaInner inlined into bpfprofJavaMiddle"
	inner_line=$(sed -E -n 's/^nmethod JitHot\.bpfprofJavaInner:([0-9]+) <- .*/\1/p' <<<"$chain")
	middle_line=$(sed -E -n 's/^nmethod JitHot\.bpfprofJavaInner:[0-9]+ <- JitHot\.bpfprofJavaMiddle:([0-9]+).*/\1/p' <<<"$chain")
	[ "$inner_line" -gt "$INNER_FIRST" ] && [ "$inner_line" -lt "$INNER_END" ] ||
		fail "$v: bpfprofJavaInner's line $inner_line is not in its body (lines $INNER_FIRST..$INNER_END of JitHot.java)"
	[ "$middle_line" = "$CALL_LINE" ] || fail "$v: bpfprofJavaMiddle calls at line $CALL_LINE, not $middle_line"
	ok "$v: compiled code named as Java users read it, inlining and lines included: ${chain#nmethod }"
	got=$(sed -n 's/^major //p' "$WORK/$v.probe")
	[ "$got" = "$want" ] || fail "$v: the tables say JDK $got, java -version says $want"
	ok "$v: the layout is derived from the JVM's own tables (JDK $got) and leads to its code heaps"
	kill -KILL "$JVM_PID"
	wait "$JVM_PID" 2>/dev/null
	JVM_PID=
	tested+=("$v")
done
[ ${#tested[@]} -gt 0 ] || fail "no JDK is installed (OpenJDK 17 or Temurin 25)"
log "tested: ${tested[*]}"
