#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
#
# pprof output (issue 19): `bpfprof record -p BURNER --format both` writes
# the Firefox profile and, from the same recording, p.pb.gz. `go tool pprof`
# (Debian's golang-go) reads it, and its numbers are the Firefox profile's:
# the total CPU time is the sum of threadCPUDelta (bpfprof report), the
# on-CPU sample count of alpha_heavy, alpha_light and beta_spin is their
# self count there, and the thread, tid and pid labels name the burner's
# threads; the first mapping is the burner's executable. An -o name ending
# in .pb.gz alone picks pprof.
. "$(dirname "$0")/common.sh"
require_root
make_workdir

command -v go >/dev/null || fail "go is not installed (scripts/install-deps.sh --test installs golang-go)"
export GOCACHE=$WORK/gocache GOPATH=$WORK/gopath HOME=${HOME:-$WORK}

DURATION=3
start_burner $((DURATION + 20))
pid=$BURNER_PID
run_bpfprof 60 record -p "$pid" -d "$DURATION" -F 499 --format both -o "$WORK/p.json.gz"
expect_success
stop_burner
[ -s "$WORK/p.pb.gz" ] || fail "--format both wrote no $WORK/p.pb.gz"
grep -q "^bpfprof: wrote $WORK/p.pb.gz" "$WORK/bpfprof.err" || fail "bpfprof did not say it wrote the pprof file"

"$BPFPROF" report --json --pid "$pid" "$WORK/p.json.gz" >"$WORK/report.json" || fail "bpfprof report failed"

log "\$ go tool pprof -top -sample_index=cpu -unit=ms $WORK/p.pb.gz"
go tool pprof -top -sample_index=cpu -unit=ms "$WORK/p.pb.gz" >"$WORK/cpu.txt" 2>"$WORK/pprof.err" ||
	fail "go tool pprof cannot read it: $(cat "$WORK/pprof.err")"
head -n 12 "$WORK/cpu.txt" | indent
total=$(sed -n 's/.*Total samples = \([0-9.]*\)ms.*/\1/p' "$WORK/cpu.txt")
want=$("$NODE" -e 'const r = JSON.parse(require("fs").readFileSync(process.argv[1]));
	console.log(r.recording.cpuMs.toFixed(3), r.recording.onCpuSamples + r.recording.offCpuSamples)' "$WORK/report.json")
read -r want_ms nsamples <<<"$want"
# threadCPUDelta is whole microseconds in the JSON: one µs of rounding per sample at most.
"$NODE" -e 'const [t, w, n] = process.argv.slice(1).map(Number);
	process.exit(Math.abs(t - w) <= n * 0.001 + 0.01 ? 0 : 1)' "$total" "$want_ms" "$nsamples" ||
	fail "pprof's CPU total is $total ms, the Firefox profile's threadCPUDelta sum is $want_ms ms"
ok "pprof's CPU total $total ms is the Firefox profile's $want_ms ms"
# The first mapping is the main binary: go tool pprof names it in its header.
grep -q '^File: burner$' "$WORK/cpu.txt" || fail "go tool pprof's header names $(grep '^File:' "$WORK/cpu.txt" || echo no file), not the burner"
ok "the first mapping is the burner's executable (go tool pprof: File: burner)"

go tool pprof -top -sample_index=samples "$WORK/p.pb.gz" >"$WORK/samples.txt" 2>/dev/null || fail "pprof -sample_index=samples failed"
interval=$("$NODE" -e 'console.log(JSON.parse(require("fs").readFileSync(process.argv[1])).recording.intervalMs)' "$WORK/report.json")
for fn in alpha_heavy alpha_light beta_spin; do
	got=$(awk -v f="$fn" '$NF == f { print $1 }' "$WORK/samples.txt")
	want=$("$NODE" -e 'const r = JSON.parse(require("fs").readFileSync(process.argv[1]));
		const f = r.topSelf.find((x) => x.name === process.argv[2]);
		console.log(f ? Math.round(f.selfMs / Number(process.argv[3])) : -1)' "$WORK/report.json" "$fn" "$interval")
	[[ $got =~ ^[0-9]+$ ]] && [ "$got" -eq "$want" ] ||
		fail "$fn: $got on-CPU samples in pprof, $want self samples in the Firefox profile"
	ok "$fn: $got on-CPU samples in both"
done

go tool pprof -tags "$WORK/p.pb.gz" >"$WORK/tags.txt" 2>/dev/null || fail "pprof -tags failed"
for want in ": alpha$" ": beta$" ": sysc$" ": $pid$" ": bpfprof-burner$"; do
	grep -q -- "$want" "$WORK/tags.txt" || fail "pprof's labels have no value matching '$want': $(head -n 30 "$WORK/tags.txt")"
done
ok "the labels name the process, its pid and its threads"

run_bpfprof 60 -d 1 -o "$WORK/only.pb.gz" -- sleep 0.3
expect_success
go tool pprof -raw "$WORK/only.pb.gz" >/dev/null 2>&1 || fail "-o only.pb.gz is not a pprof file go tool pprof reads"
[ ! -e "$WORK/only.json.gz" ] || fail "-o only.pb.gz also wrote a Firefox profile"
ok "-o NAME.pb.gz writes pprof"
