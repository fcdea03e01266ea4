#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
#
# A JVM's own description of its structures (issue 39): for every JDK
# present (OpenJDK 17, Temurin 25; a missing one is named), a JVM running
# JitHot.java is read by hotspot_probe as bpfprof reads it: libjvm.so's
# gHotSpotVM* tables, the layout derived from them with no table per JDK
# build, and the code heaps that layout leads to. The JDK's release must
# be the one `java -version` says, and the heaps what a JVM has.
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
	log "\$ hotspot_probe $JVM_PID ($v)"
	"$HOTSPOT_PROBE" "$JVM_PID" >"$WORK/$v.probe" 2>&1
	status=$?
	sed 's/^/   /' "$WORK/$v.probe"
	[ "$status" -eq 0 ] || fail "$v: hotspot_probe failed (exit status $status)"
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
