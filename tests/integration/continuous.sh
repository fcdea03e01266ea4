#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
#
# `bpfprof continuous` (issue 7) with real BPF:
#
#   gapless    -a --interval 2s while a burner runs: at least three full
#              snapshots, then SIGTERM in the middle of the next window. Every
#              snapshot loads with profiler-cli, they touch without gap or
#              overlap, the burner is in each (its CPU never more than the
#              window and what its spinning thread's own clock counted in it,
#              its sleeping main thread's wait split at each boundary),
#              and the last one is a valid partial window.
#   retention  --interval 300ms --keep 3: after many snapshots, exactly the
#              newest 3 are kept, still consecutive; other files are left alone.
#   max_bytes  --max-bytes 30K: the snapshots kept fit in 30 KiB.
#   sighup     --interval 60s: SIGHUP ends the current snapshot at once.
#   pprof      -p BURNER --format both --keep 3 (issue 19): each window is a
#              .json.gz and a .pb.gz of one stem, kept and deleted together;
#              go tool pprof reads every .pb.gz and its CPU total is the one
#              bpfprof report reads from the window's Firefox snapshot, whose
#              top functions are the burner's; --format pprof alone writes
#              only .pb.gz snapshots.
#   slow_writer -a --interval 2s --ring-size 256K while two threads wake each
#              other ~20k times a second, and each of the first two
#              snapshots takes 2.5 s more to write, longer than an interval
#              (BPFPROF_TEST_WRITE_DELAY_MS, as a stalled disk): the writer
#              thread and its queue take that, the rings are read on, no
#              snapshot lost a record, none waited for the writer, and they
#              still touch (issues 20, 37). Whatever the first window's
#              symbolization takes (cold caches, ASan) only moves its write
#              later: the queue holds two windows, and the two late writes
#              need less than one more interval. The control: the same rings
#              with the reader itself stalled 1.5 s (BPFPROF_TEST_STALL) do
#              lose records.
#   blocked    -p pipepair --interval 1s --off-cpu: its main thread sleeps
#              through every window (issue 21); each full window gives it its
#              wait over the window, its off-CPU samples, at the stack it
#              sleeps in, not a blank track.
#
# Usage: continuous.sh gapless|retention|max_bytes|sighup|pprof|slow_writer|blocked
. "$(dirname "$0")/common.sh"
require_root
make_workdir

MODE=${1:?usage: continuous.sh gapless|retention|max_bytes|sighup|pprof|slow_writer|blocked}
SNAPS=$WORK/snapshots
BPF_PID=
CONT_ENV=()

cleanup() {
	common_exit
	[ -n "$BPF_PID" ] && kill -KILL "$BPF_PID" 2>/dev/null
}
trap cleanup EXIT

snapshots() {
	find "$SNAPS" -maxdepth 1 -name 'bpfprof-*Z.json.gz' 2>/dev/null | wc -l
}

# start_continuous ARGS...: bpfprof continuous in the background, once its programs are attached.
start_continuous() {
	log "\$ ${CONT_ENV[*]} bpfprof continuous $* --out-dir $SNAPS -v &"
	# Emptied here: the background job's own redirections run later, and a
	# second start would find the first one's lines.
	: >"$WORK/bpfprof.out"
	: >"$WORK/bpfprof.err"
	env --default-signal=INT,TERM "${CONT_ENV[@]}" "$BPFPROF" continuous "$@" --out-dir "$SNAPS" -v \
		>"$WORK/bpfprof.out" 2>"$WORK/bpfprof.err" &
	BPF_PID=$!
	for ((i = 0; i < 300; i++)); do
		grep -q "recording .* into" "$WORK/bpfprof.err" && return
		kill -0 "$BPF_PID" 2>/dev/null || fail "bpfprof exited early: $(cat "$WORK/bpfprof.err")"
		sleep 0.05
	done
	fail "bpfprof continuous did not start within 15 s"
}

# wait_snapshots N SECONDS
wait_snapshots() {
	for ((i = 0; i < $2 * 20; i++)); do
		[ "$(snapshots)" -ge "$1" ] && return
		kill -0 "$BPF_PID" 2>/dev/null || fail "bpfprof exited: $(tail -n 5 "$WORK/bpfprof.err")"
		sleep 0.05
	done
	fail "fewer than $1 snapshots after $2 s: $(snapshots)"
}

# wait_written N SECONDS: until bpfprof says it wrote N snapshots (retention may have removed some).
wait_written() {
	for ((i = 0; i < $2 * 20; i++)); do
		[ "$(grep -c "^bpfprof: snapshot .* written" "$WORK/bpfprof.err")" -ge "$1" ] && return
		kill -0 "$BPF_PID" 2>/dev/null || fail "bpfprof exited: $(tail -n 5 "$WORK/bpfprof.err")"
		sleep 0.05
	done
	fail "fewer than $1 snapshots written after $2 s"
}

# stop_continuous SIGNAL: it must write the current window and exit 0.
stop_continuous() {
	kill -s "$1" "$BPF_PID"
	for ((i = 0; i < 600; i++)); do
		kill -0 "$BPF_PID" 2>/dev/null || break
		sleep 0.05
	done
	kill -0 "$BPF_PID" 2>/dev/null && fail "bpfprof still running 30 s after SIG$1"
	wait "$BPF_PID"
	STATUS=$?
	BPF_PID=
	log "   exit status $STATUS after SIG$1"
	head -n 40 "$WORK/bpfprof.err" | indent
	expect_success
}

check_snapshots() {
	log "\$ continuous.mjs --dir $SNAPS $*"
	node_check continuous.mjs --dir "$SNAPS" "$@" || fail "snapshot checks failed"
}

case $MODE in
blocked)
	: "${PIPEPAIR:?PIPEPAIR is not set}"
	start_background pipepair "$PIPEPAIR" 30 200
	PP=$BG_PID
	sleep 0.5
	start_continuous -p "$PP" --interval 1s --off-cpu
	wait_written 3 40
	stop_continuous TERM
	# The full windows: all but the last, which SIGTERM cut short.
	mapfile -t snaps < <(find "$SNAPS" -maxdepth 1 -name 'bpfprof-*Z.json.gz' | sort | head -n -1)
	[ "${#snaps[@]}" -ge 2 ] || fail "fewer than 2 full windows: ${#snaps[@]}"
	for f in "${snaps[@]}"; do
		run_check sched --profile "$f" --gzip --pid "$PP" \
			--expect "blocked-throughout pipepair sleeping" \
			--expect "offcpu-stack pipepair sleeping sleep_until nanosleep" ||
			fail "in $(basename "$f"), pipepair's main thread is not shown waiting through the window"
	done
	ok "${#snaps[@]} full windows show pipepair's main thread waiting through each, in sleep_until"
	;;
gapless)
	start_continuous -a --interval 2s
	start_burner 60
	wait_snapshots 3 20
	# Mid-interval: the fourth window is about 0.8 s old.
	sleep 0.8
	stop_continuous TERM
	check_snapshots --pid "$BURNER_PID" --truth "$WORK/burner.out" --min-count 4 --interval 2000 --last-shorter-than 1990
	;;
retention)
	mkdir -p "$SNAPS"
	echo "not a snapshot" >"$SNAPS/notes.txt"
	touch "$SNAPS/bpfprof-notes.json.gz"
	start_continuous -a --interval 300ms --keep 3 --no-sched
	start_burner 60
	# Twice as many as are kept, however slowly they come.
	wait_written 6 60
	stop_continuous INT
	written=$(grep -c "^bpfprof: snapshot .* written" "$WORK/bpfprof.err")
	log "   $written snapshots written"
	[ "$written" -ge 6 ] || fail "only $written snapshots written; the retention was not exercised"
	[ -f "$SNAPS/notes.txt" ] && [ -f "$SNAPS/bpfprof-notes.json.gz" ] ||
		fail "retention deleted files that are not snapshots"
	ok "files that are not snapshots were left alone"
	check_snapshots --count 3
	;;
max_bytes)
	start_continuous -a --interval 300ms --max-bytes 30K --no-sched
	start_burner 60
	wait_snapshots 2 20
	sleep 2.5
	stop_continuous TERM
	total=$(find "$SNAPS" -maxdepth 1 -name 'bpfprof-*Z.json.gz' -printf '%s\n' | awk '{ s += $1 } END { print s + 0 }')
	newest=$(find "$SNAPS" -maxdepth 1 -name 'bpfprof-*Z.json.gz' -printf '%f %s\n' | sort | tail -n 1 | cut -d' ' -f2)
	log "   kept $(snapshots) snapshots, $total bytes (newest $newest bytes)"
	[ "$total" -le 30720 ] || [ "$(snapshots)" -eq 1 ] || fail "snapshots total $total bytes, over --max-bytes 30K"
	ok "kept snapshots fit in --max-bytes"
	check_snapshots --min-count 1
	;;
sighup)
	start_continuous -a --interval 60s
	start_burner 60
	sleep 1
	kill -s HUP "$BPF_PID"
	wait_snapshots 1 60
	sleep 0.5
	stop_continuous TERM
	# Both windows are cut short of the 60 s interval, by SIGHUP and by SIGTERM,
	# however long the first took to write.
	check_snapshots --pid "$BURNER_PID" --truth "$WORK/burner.out" --count 2 --last-shorter-than 59000
	;;
pprof)
	command -v go >/dev/null || fail "go is not installed (scripts/install-deps.sh --test installs golang-go)"
	export GOCACHE=$WORK/gocache GOPATH=$WORK/gopath HOME=${HOME:-$WORK}
	start_burner 60
	start_continuous -p "$BURNER_PID" --interval 1s --keep 3 --format both
	grep -q "one snapshot (.json.gz and .pb.gz) every" "$WORK/bpfprof.err" ||
		fail "the start-up line does not say that each snapshot is written in both formats"
	wait_written 5 40
	stop_continuous TERM
	ls "$SNAPS" | indent
	stems=$(find "$SNAPS" -maxdepth 1 -name 'bpfprof-*Z.*' -printf '%f\n' | sed 's/Z\..*/Z/' | sort -u)
	[ "$(wc -l <<<"$stems")" -eq 3 ] || fail "--keep 3 kept $(wc -l <<<"$stems") windows, not 3"
	checked=0
	for stem in $stems; do
		[ -s "$SNAPS/$stem.json.gz" ] && [ -s "$SNAPS/$stem.pb.gz" ] ||
			fail "window $stem does not have both its .json.gz and its .pb.gz"
		"$BPFPROF" report --json "$SNAPS/$stem.json.gz" >"$WORK/$stem.report.json" ||
			fail "bpfprof report cannot read snapshot $stem.json.gz"
		go tool pprof -top -sample_index=cpu -unit=ms "$SNAPS/$stem.pb.gz" >"$WORK/$stem.cpu.txt" 2>"$WORK/pprof.err" ||
			fail "go tool pprof cannot read $stem.pb.gz: $(cat "$WORK/pprof.err")"
		total=$(sed -n 's/.*Total samples = \([0-9.]*\)ms.*/\1/p' "$WORK/$stem.cpu.txt")
		want=$("$NODE" -e 'const r = JSON.parse(require("fs").readFileSync(process.argv[1]));
			console.log(r.recording.cpuMs.toFixed(3), r.recording.onCpuSamples + r.recording.offCpuSamples,
				r.topSelf.slice(0, 5).map((f) => f.name).join(","))' "$WORK/$stem.report.json")
		read -r want_ms nsamples top <<<"$want"
		# threadCPUDelta is whole microseconds in the JSON: one µs of rounding per sample at most.
		"$NODE" -e 'const [t, w, n] = process.argv.slice(1).map(Number);
			process.exit(Math.abs(t - w) <= n * 0.001 + 0.01 ? 0 : 1)' "${total:-x}" "$want_ms" "$nsamples" ||
			fail "$stem: pprof's CPU total is ${total:-none} ms, the Firefox snapshot's is $want_ms ms"
		# A whole window of the burner: its two busy functions lead the report.
		if [ "$stem" != "$(tail -n 1 <<<"$stems")" ]; then
			for fn in alpha_heavy beta_spin; do
				[[ ,$top, == *,$fn,* ]] || fail "$stem: bpfprof report's top functions are $top, without $fn"
			done
		fi
		log "   $stem: pprof $total ms = snapshot $want_ms ms; report's top: $top"
		checked=$((checked + 1))
	done
	ok "each of the $checked windows: both files, the same CPU total, the burner's functions on top"
	check_snapshots --count 3

	rm -rf "$SNAPS"
	start_continuous -p "$BURNER_PID" --interval 500ms --format pprof
	wait_written 2 30
	stop_continuous INT
	[ -z "$(find "$SNAPS" -maxdepth 1 -name '*.json.gz')" ] || fail "--format pprof also wrote Firefox snapshots"
	for f in "$SNAPS"/bpfprof-*Z.pb.gz; do
		go tool pprof -raw "$f" >/dev/null 2>&1 || fail "--format pprof: go tool pprof cannot read $f"
	done
	ok "--format pprof writes only .pb.gz snapshots, each read by go tool pprof"
	;;
slow_writer)
	: "${PINGPONG:?PINGPONG is not set}"
	start_background pingpong "$PINGPONG" -s 60
	sleep 0.3
	# The control: were the capture path to wait that long, these rings would overflow.
	BPFPROF_PREFIX=(env BPFPROF_TEST_STALL=1000:1500)
	run_bpfprof 60 -a -d 3 --ring-size 256K -o "$WORK/control.json.gz"
	BPFPROF_PREFIX=()
	expect_success
	control=$(sed -n 's/.*; \([0-9]*\) switches and \([0-9]*\) wakeups lost$/\1 + \2/p' "$WORK/bpfprof.err")
	[ -n "$control" ] && [ $((control)) -gt 0 ] ||
		fail "the control lost nothing with the reader stalled 1.5 s: the load is too light to show anything"
	ok "control: a reader stalled 1.5 s loses $((control)) switch and wakeup records with 256 KiB rings"
	CONT_ENV=(BPFPROF_TEST_WRITE_DELAY_MS=2500:2)
	start_continuous -a --interval 2s --ring-size 256K
	wait_written 4 60
	stop_continuous TERM
	grep -q "lost because a ring buffer was full" "$WORK/bpfprof.err" &&
		fail "records were lost: $(grep 'lost because' "$WORK/bpfprof.err" | head -n 3)"
	grep -q "written more slowly than they are cut" "$WORK/bpfprof.err" &&
		fail "a cut waited for the writer: two writes of an interval and a half each filled its queue"
	ok "two snapshot writes longer than an interval each: no cut waited, no record lost"
	"$NODE" -e '
	const zlib = require("zlib"), fs = require("fs"), path = require("path");
	const dir = process.argv[1];
	let n = 0, switches = 0;
	for (const f of fs.readdirSync(dir).filter((f) => f.endsWith(".json.gz")).sort()) {
		const p = JSON.parse(zlib.gunzipSync(fs.readFileSync(path.join(dir, f))));
		const x = Object.fromEntries(p.meta.extra[0].entries.map((e) => [e.label, e.value]));
		const lost = x["Lost samples"] + x["Lost switch events"] + x["Lost wakeup events"] + x["Lost other events"];
		if (lost || x["Intervals with lost events (Lost events markers)"])
			{ console.log(`FAIL ${f}: ${lost} records lost`); process.exit(1); }
		switches += x["Context switches"];
		n++;
	}
	if (n < 4) { console.log(`FAIL only ${n} snapshots`); process.exit(1); }
	console.log(`ok   ${n} snapshots, ${switches} context switches, none lost`);
	' "$SNAPS" || fail "a snapshot lost records while the writer was slow"
	check_snapshots --min-count 4 --interval 2000
	;;
*)
	fail "unknown mode $MODE"
	;;
esac
