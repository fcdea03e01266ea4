#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
#
# A local user's process that claims to be a JVM, against root's bpfprof
# (issue 39): its own libjvm.so exports HotSpot's tables
# (tests/workloads/fakejvm_lib.c), and bpfprof reads them and the process's
# memory to name its "compiled code". Run by a throw-away unprivileged user:
#
#   fakejvm_huge     valid tables whose every nmethod claims 250 KiB of
#                    PcDescs and as much of scopes, at hundreds of addresses:
#                    reading them is held to the JVM's read budget (said
#                    once), bpfprof's own CPU stays under half the
#                    recording's, and the code is named as the tables say
#                    (the reading did happen): past the budget by its
#                    nmethod's own method, without the inlined ones.
#   fakejvm_endless  a struct table with no end: refused once, said once,
#                    its code one [JIT] java frame.
#   fakejvm_tiny     valid tables whose segment map leads nowhere: every
#                    sampled address names nothing after a long walk of
#                    one-byte reads. The reads bpfprof says it made (-v) stay
#                    within the read budget, counted at its minimum per read
#                    (many small reads cost as the bytes of large ones).
#
# Usage: hostile_jvm.sh MODE (FAKEJVM, FAKEJVM_LIB: the workload and its library)
. "$(dirname "$0")/common.sh"
. "$(dirname "$0")/hostile_common.sh"
hostile_setup "hostile_jvm.sh fakejvm_huge|fakejvm_endless|fakejvm_tiny" "${1:-}"
: "${FAKEJVM:?FAKEJVM is not set}" "${FAKEJVM_LIB:?FAKEJVM_LIB is not set}"
VICTIM_PID=
cleanup() {
	[ -n "$VICTIM_PID" ] && kill -KILL "$VICTIM_PID" 2>/dev/null
}
HOSTILE_CLEANUP+=(cleanup)
make_hostile_user

# The user's copies: a checkout may be 0700, and the library must be named libjvm.so.
mkdir -p "$USER_DIR/lib"
cp "$FAKEJVM" "$USER_DIR/fakejvm"
cp "$FAKEJVM_LIB" "$USER_DIR/lib/libjvm.so"
chown -R "$USER_NAME:" "$USER_DIR"
chmod 0755 "$USER_DIR/fakejvm" "$USER_DIR/lib" "$USER_DIR/lib/libjvm.so"

: >"$WORK/jvm.out"
env FAKEJVM_MODE="${MODE#fakejvm_}" "${as_user[@]}" "$USER_DIR/fakejvm" "$USER_DIR/lib" 30 "$MODE" \
	>"$WORK/jvm.out" 2>"$WORK/jvm.err" &
VICTIM_PID=$!
for ((i = 0; i < 100; i++)); do
	[ -s "$WORK/jvm.out" ] && break
	sleep 0.05
done
[ "$(head -n 1 "$WORK/jvm.out")" = "$VICTIM_PID" ] ||
	fail "fakejvm did not start: $(cat "$WORK/jvm.out" "$WORK/jvm.err")"
grep -q '/libjvm\.so$' "/proc/$VICTIM_PID/maps" || fail "fakejvm did not map its libjvm.so"

TIMEFORMAT='%U %S'
{ time run_bpfprof 60 -v -p "$VICTIM_PID" -d 3 -o "$WORK/jvm.json.gz"; } 2>"$WORK/cpu.txt"
expect_success
read -r user sys <"$WORK/cpu.txt"
samples=$("$NODE" -e 'const p = JSON.parse(require("zlib").gunzipSync(require("fs").readFileSync(process.argv[1])));
	console.log(p.threads.filter((t) => t.pid === process.argv[2]).reduce((s, t) => s + t.samples.length, 0));' \
	"$WORK/jvm.json.gz" "$VICTIM_PID")
[ "$samples" -ge 10 ] || fail "the fake JVM has $samples samples"
named=$(zcat "$WORK/jvm.json.gz" | grep -o 'FakeJvm\.hostileMethod' | wc -l)
grouped=$(zcat "$WORK/jvm.json.gz" | grep -o '\[JIT\] java' | wc -l)
log "   fake JVM $VICTIM_PID: $samples samples; bpfprof used ${user}s user, ${sys}s system in ${ELAPSED}s"

case $MODE in
fakejvm_huge)
	said=$(grep -c "JVM process $VICTIM_PID: its user's JVMs ask for more reads than JVMs'" "$WORK/bpfprof.err")
	[ "$said" -eq 1 ] || fail "the read budget was said $said times, not once"
	# Past the budget the huge debug information is not read; the nmethod's own method still is
	# (a few bytes), so the code keeps a name, without what was inlined.
	[ "$named" -gt 0 ] || fail "nothing of the fake JVM was named: its tables were not read, so the budget was never tested"
	awk -v u="$user" -v s="$sys" -v e="$ELAPSED" 'BEGIN { exit !(u + s < e / 2) }' ||
		fail "bpfprof used ${user}s + ${sys}s of CPU in ${ELAPSED}s: the fake JVM's reads were not held"
	ok "a JVM whose every frame claims half a megabyte of debug information is read within its budget ($samples samples, said once)"
	;;
fakejvm_endless)
	said=$(grep -c "the JVM of process $VICTIM_PID is not read (Invalid argument)" "$WORK/bpfprof.err")
	[ "$said" -eq 1 ] || fail "the endless table was said $said times, not once"
	[ "$named" -eq 0 ] || fail "the endless table's JVM was named"
	[ "$grouped" -gt 0 ] || fail "its code is not one [JIT] java frame"
	ok "a JVM whose struct table never ends is refused once, its code [JIT] java ($samples samples)"
	;;
fakejvm_tiny)
	# "JVM reads: N reads costing C bytes of the read budget, R refused" (hotspot_procs.c), and
	# the budget: 32 MiB at once, 8 MiB a second on, a read costing 512 bytes at least.
	line=$(grep -m 1 'JVM reads: ' "$WORK/bpfprof.err")
	[ -n "$line" ] || fail "bpfprof said nothing of its reads of the fake JVM (-v)"
	reads=$(sed -E -n 's/.*JVM reads: ([0-9]+) reads costing ([0-9]+) bytes.*/\1/p' <<<"$line")
	cost=$(sed -E -n 's/.*JVM reads: ([0-9]+) reads costing ([0-9]+) bytes.*/\2/p' <<<"$line")
	log "   $line"
	[ "$named" -eq 0 ] || fail "the fake JVM's code was named, though its segment map leads nowhere"
	awk -v r="$reads" -v c="$cost" -v e="$ELAPSED" \
		'BEGIN { b = 32 * 1048576 + 8 * 1048576 * e; exit !(r > 0 && r * 512 <= c && c <= b) }' ||
		fail "$reads reads costing $cost bytes in ${ELAPSED}s: past the read budget, or small reads not counted at 512 bytes"
	ok "a JVM whose every address is a long walk of one-byte reads is read within the budget ($reads reads, costing $cost bytes, in ${ELAPSED}s)"
	;;
*)
	fail "unknown mode $MODE"
	;;
esac
