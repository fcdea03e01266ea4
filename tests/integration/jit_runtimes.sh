#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
#
# JIT code of runtimes run as people run them (issue 39), beside
# jit_node.sh's perf-map cases:
#   - node --perf-prof: names from the jitdump file node maps (jit-PID.dump);
#   - node with no flags: its JS functions named from V8's own heap, from
#     the words BPF read in their frames (lang/v8_procs.h): hot.js's three
#     nested functions, innermost and outermost, in the JavaScript category,
#     isJS, with their file and lines; and the JS function a thread waits
#     in (Atomics.wait) in its off-CPU stacks;
#   - every JDK present (OpenJDK 17, Temurin 25; a missing one is named),
#     with perf's recipe (-XX:+PreserveFramePointer -XX:+DumpPerfMapAtExit):
#     the map the JVM writes as it exits is read, so the methods are named;
#   - the same JVMs with no flags: the compiled methods named from the JVM's
#     own structures (lang/hotspot_procs.h), inlined ones included; the
#     interpreted ones (main) from the Method* and bytecode pointer BPF read
#     in their frames (bpf/runtime.bpf.h), with their lines, below the C2
#     frames the walk stepped by their frame size (bpf/rt_step.bpf.h); and
#     the Java method a thread sleeps in (Thread.sleep) in its off-CPU stacks;
#   - the same JVMs recorded with -p once they run their compiled loop;
#   - the same JVMs with -Xint: the three nested methods, all interpreted,
#     named in >= 90 % of the Java thread's samples once its loop runs.
# In every case no function of the runtime's process is named like a raw
# address, and the frames are in the runtime's category.
#
# NODE and JIT_HOT may come from ctest; JAVA_HOT defaults to
# tests/workloads/JitHot.java next to this script.
. "$(dirname "$0")/common.sh"
require_root
make_workdir

WORKLOADS=$(cd "$(dirname "$0")/../workloads" && pwd)
JIT_HOT=${JIT_HOT:-$WORKLOADS/jit_hot.js}
HOT_JS=${HOT_JS:-$WORKLOADS/hot.js}
JAVA_HOT=${JAVA_HOT:-$WORKLOADS/JitHot.java}
JIT_NODE=$(command -v "$NODE") || fail "node ($NODE) is not installed; it runs the JIT workload"
cd "$WORK" || fail "cannot enter $WORK"

# profile_runtime NAME PIDLINE_MARK -- COMMAND...: records COMMAND (which
# prints its pid first) into $WORK/NAME.json.gz; sets RT_PID.
profile_runtime() {
	local name=$1
	shift 2
	run_bpfprof 120 --state-dir "$WORK/state" -o "$WORK/$name.json.gz" -- "$@"
	expect_success
	RT_PID=$(head -n 1 "$WORK/bpfprof.out")
	[[ $RT_PID =~ ^[0-9]+$ ]] || fail "$name: the workload did not print its pid: $(head -n 3 "$WORK/bpfprof.out")"
	cp "$WORK/bpfprof.err" "$WORK/$name.err"
}

# lang_share NAME LANGUAGE: the recording's "runtime frames:" line and
# `bpfprof report` on its profile give the same share of LANGUAGE's
# samples with one of its functions named (issue 39 item 7); prints it.
lang_share() {
	local name=$1 lang=$2 line rec rep
	line=$(grep -m 1 '^bpfprof: runtime frames: ' "$WORK/$name.err") ||
		fail "$name: the recording printed no runtime frames line"
	[[ $line =~ [:\;]\ $lang\ ([0-9.]+)%\ of\ ([0-9]+) ]] || fail "$name: no $lang in: $line"
	rec="${BASH_REMATCH[1]}% of ${BASH_REMATCH[2]}"
	rep=$("$BPFPROF" report "$WORK/$name.json.gz" | grep -m 1 "^$lang frames: ") ||
		fail "$name: report prints no '$lang frames:' line"
	[[ $rep =~ ^$lang\ frames:\ ([0-9.]+)%\ of\ ([0-9]+)\  ]] || fail "$name: report says: $rep"
	[ "$rec" = "${BASH_REMATCH[1]}% of ${BASH_REMATCH[2]}" ] ||
		fail "$name: the recording says $lang $rec, report ${BASH_REMATCH[1]}% of ${BASH_REMATCH[2]}"
	ok "$name: $lang functions named in $rec of its samples (recording and report agree)"
	SHARE=${rec%%%*}
}

mkdir -p "$WORK/state"

log "== node --perf-prof: names from the jitdump"
profile_runtime node_jitdump - "$JIT_NODE" --perf-prof "$JIT_HOT" 2
grep -q '^jit_hot: iterations' "$WORK/bpfprof.out" || fail "jit_hot.js did not finish its loop"
ls "$WORK"/jit-"$RT_PID".dump >/dev/null 2>&1 || fail "node --perf-prof wrote no jit-$RT_PID.dump here"
rm -f /tmp/perf-"$RT_PID".map
node_check jit_checks.mjs --profile "$WORK/node_jitdump.json.gz" --gzip --pid "$RT_PID" \
	--func bpfprofHotLoop --func bpfprofInner --category JavaScript --js --min-percent 30 ||
	fail "node --perf-prof: its jitdump's names are not in the profile"
lang_share node_jitdump JavaScript

log "== node, no flags: JS functions named from V8's heap"
profile_runtime node_plain - "$JIT_NODE" "$HOT_JS" 2 25
grep -q '^hot: waited 25' "$WORK/bpfprof.out" || fail "hot.js did not finish its loop and waits"
# Of the main thread's samples in JS code from the loop's first on: the innermost
# and the outermost of the three nested functions (TurboFan inlines them: one
# frame per function inlined), before the change "[JIT] node" and node's builtins.
node_check java_frames_checks.mjs --profile "$WORK/node_plain.json.gz" --gzip --pid "$RT_PID" \
	--func bpfprofJsInner --func bpfprofJsOuter --after bpfprofJsOuter --in-category JavaScript \
	--category JavaScript --js --file hot.js --line --min-percent 90 ||
	fail "node: its three nested JS functions are not named, with their file and lines"
# Code nothing names is still one frame, never a function per address; the front-end keeps them.
node_check jit_checks.mjs --profile "$WORK/node_plain.json.gz" --gzip --pid "$RT_PID" \
	--func bpfprofJsInner --func bpfprofJsMiddle --func bpfprofJsOuter --category JavaScript --js \
	--min-percent 30 || fail "node: its JS functions are not in the JavaScript category"
lang_share node_plain JavaScript
awk -v s="$SHARE" 'BEGIN { exit !(s >= 90) }' ||
	fail "node: the recording's runtime frames line names JS functions in only $SHARE % of its samples"
# Off-CPU: bpfprofJsSleeper waits 25 times in Atomics.wait (V8's FutexEmulation).
node_check java_frames_checks.mjs --profile "$WORK/node_plain.json.gz" --gzip --pid "$RT_PID" \
	--func bpfprofJsSleeper --off-cpu --within FutexEmulation --category JavaScript --js --line \
	--min-percent 90 || fail "node: the JS function a thread waits in is not in its off-CPU stacks"

jdks=()
for jdk in /usr/lib/jvm/java-17-openjdk-amd64 /usr/lib/jvm/temurin-25-jdk-amd64; do
	if [ -x "$jdk/bin/java" ]; then
		jdks+=("$jdk")
	else
		log "MISSING: $jdk is not installed here; its JVM is not tested"
		MISSING_JDK=1
	fi
done
[ ${#jdks[@]} -gt 0 ] || fail "no JDK is installed (OpenJDK 17 or Temurin 25): the Java cases cannot run"
for jdk in "${jdks[@]}"; do
	v=$(basename "$jdk")
	log "== $v, -XX:+PreserveFramePointer -XX:+DumpPerfMapAtExit: the map written at exit"
	profile_runtime "java_map_$v" - "$jdk/bin/java" -XX:+PreserveFramePointer \
		-XX:+UnlockDiagnosticVMOptions -XX:+DumpPerfMapAtExit "$JAVA_HOT" 3
	grep -q '^jit_hot_java: iterations' "$WORK/bpfprof.out" || fail "$v: JitHot did not finish its loop"
	[ -s "/tmp/perf-$RT_PID.map" ] || fail "$v: the JVM wrote no /tmp/perf-$RT_PID.map at exit"
	ok "$v wrote /tmp/perf-$RT_PID.map at exit ($(wc -l <"/tmp/perf-$RT_PID.map") lines)"
	rm -f "/tmp/perf-$RT_PID.map"
	# C2 inlines the inner methods into whichever is compiled: any of the three names counts.
	node_check jit_checks.mjs --profile "$WORK/java_map_$v.json.gz" --gzip --pid "$RT_PID" \
		--func JitHot.bpfprofJavaInner --func JitHot.bpfprofJavaMiddle --func JitHot.bpfprofJavaOuter \
		--category Java --min-percent 60 ||
		fail "$v: the methods in the map the JVM wrote at exit are not named"

	log "== $v, no flags: the methods read from the JVM itself"
	profile_runtime "java_plain_$v" - "$jdk/bin/java" "$JAVA_HOT" 3
	node_check jit_checks.mjs --profile "$WORK/java_plain_$v.json.gz" --gzip --pid "$RT_PID" \
		--func JitHot.bpfprofJavaInner --category Java --min-percent 60 ||
		fail "$v: its compiled methods are not named from the JVM's own structures"
	lang_share "java_plain_$v" Java
	# Interpreted frames, named from what BPF read in them (issue 39): main() is
	# interpreted (it runs once), below the C2 code of the loop, whose frames
	# keep no frame pointer: the walk steps them by their code blob's frame
	# size (bpf/rt_step.bpf.h), and main is in every sample of the loop's
	# (25 % before that, the walks that RBP happened to take through).
	node_check java_frames_checks.mjs --profile "$WORK/java_plain_$v.json.gz" --gzip --pid "$RT_PID" \
		--func JitHot.main --after JitHot.bpfprofJavaOuter --line --min-percent 90 ||
		fail "$v: the interpreted JitHot.main is not named, with its line"
	# Off-CPU: the sleeper thread waits in Thread.sleep inside bpfprofJavaSleeper
	# (interpreted: it loops some 150 times), in every one of its waits.
	node_check java_frames_checks.mjs --profile "$WORK/java_plain_$v.json.gz" --gzip --pid "$RT_PID" \
		--func JitHot.bpfprofJavaSleeper --off-cpu --line --min-percent 90 ||
		fail "$v: the Java method a thread sleeps in is not in its off-CPU stacks"

	# The launcher's thread idles while the Java thread runs main(): the latter is selected at load.
	"$NODE" -e 'const p = JSON.parse(require("zlib").gunzipSync(require("fs").readFileSync(process.argv[1])));
		const cpu = (t) => (t.samples.threadCPUDelta || []).reduce((a, b) => a + (b || 0), 0);
		const mine = p.threads.filter((t) => t.pid === process.argv[2]);
		const busiest = mine.reduce((a, t) => (cpu(t) > cpu(a) ? t : a), mine[0]);
		const sel = p.threads[p.meta.initialSelectedThreads[0]];
		console.log(`   selected ${sel.name} ${sel.tid}, busiest ${busiest.name} ${busiest.tid}`);
		process.exit(sel === busiest ? 0 : 1);' "$WORK/java_plain_$v.json.gz" "$RT_PID" ||
		fail "$v: the JVM's busiest thread is not the one selected at load"

	log "== $v, no flags, recorded with -p once the JVM runs its compiled loop"
	: >"$WORK/attach_$v.out"
	"$jdk/bin/java" "$JAVA_HOT" 30 >"$WORK/attach_$v.out" 2>&1 &
	jvm=$!
	for _ in $(seq 100); do
		[ -s "$WORK/attach_$v.out" ] && break
		sleep 0.1
	done
	RT_PID=$(head -n 1 "$WORK/attach_$v.out")
	if ! [[ $RT_PID =~ ^[0-9]+$ ]]; then
		kill "$jvm" 2>/dev/null
		fail "$v: JitHot did not print its pid: $(head -n 3 "$WORK/attach_$v.out")"
	fi
	# Its loop compiled by C2 (JitHot warms up in well under a second), then recorded from outside.
	sleep 2
	run_bpfprof 60 --state-dir "$WORK/state" -o "$WORK/java_attach_$v.json.gz" -p "$RT_PID" -d 2
	kill "$jvm" 2>/dev/null
	wait "$jvm" 2>/dev/null
	expect_success
	# Every sample of the Java thread is in the compiled loop (or below it):
	# its walk steps the C2 frames by their size to the interpreted main, from
	# the first sample after the JVM is read and published on (its first
	# 0.1-0.2 s are walked by frame pointers). With frame pointers alone main
	# was in 0.1 % of them.
	node_check java_frames_checks.mjs --profile "$WORK/java_attach_$v.json.gz" --gzip --pid "$RT_PID" \
		--func JitHot.main --func JitHot.bpfprofJavaOuter --after JitHot.main --min-percent 90 ||
		fail "$v: recorded with -p in its compiled loop, JitHot.main is not below its compiled frames"

	log "== $v, -Xint: every method interpreted"
	profile_runtime "java_xint_$v" - "$jdk/bin/java" -Xint "$JAVA_HOT" 1.5
	grep -q '^jit_hot_java: iterations' "$WORK/bpfprof.out" || fail "$v -Xint: JitHot did not finish its loop"
	# From the loop's first sample on: before it, javac compiles JitHot.java on that thread.
	node_check java_frames_checks.mjs --profile "$WORK/java_xint_$v.json.gz" --gzip --pid "$RT_PID" \
		--func JitHot.bpfprofJavaInner --func JitHot.bpfprofJavaMiddle --func JitHot.bpfprofJavaOuter \
		--after JitHot.bpfprofJavaOuter --line --min-percent 90 ||
		fail "$v -Xint: the three interpreted methods are not named"
done
log "tested: node $("$JIT_NODE" --version), ${jdks[*]}"
[ -z "${MISSING_JDK:-}" ] || log "not tested (missing): see MISSING above"
ok "JIT runtimes named from their own structures, jitdumps and maps written at exit"
