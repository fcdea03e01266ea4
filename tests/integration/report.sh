#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
#
# `bpfprof report` (issue 19) on a 3 s `-p` recording of the burner: --json
# --pid gives each worker's CPU time as the profile and the burner's own
# clock have it, alpha's 75/25 split and beta_spin among the top self
# functions, and nothing of other processes (report_checks.mjs); --tid keeps
# one thread; the text report has its sections and names the workers and
# their functions.
. "$(dirname "$0")/common.sh"
require_root
make_workdir

DURATION=3
start_burner $((DURATION + 20))
pid=$BURNER_PID
run_bpfprof 60 record -p "$pid" -d "$DURATION" -F 499 -o "$WORK/pid.json.gz"
expect_success
stop_burner

log "\$ bpfprof report --json --pid $pid $WORK/pid.json.gz"
"$BPFPROF" report --json --pid "$pid" "$WORK/pid.json.gz" >"$WORK/report.json" 2>"$WORK/report.err" ||
	fail "bpfprof report --json failed: $(cat "$WORK/report.err")"
node_check report_checks.mjs --report "$WORK/report.json" --profile "$WORK/pid.json.gz" \
	--pid "$pid" --truth "$WORK/burner.out" || fail "report checks failed"

beta=$(sed -n 's/.*beta=\([0-9]*\).*/\1/p' <<<"$BURNER_TIDS")
"$BPFPROF" report --json --tid "$beta" "$WORK/pid.json.gz" >"$WORK/beta.json" || fail "report --tid failed"
names=$("$NODE" -e 'const r = JSON.parse(require("fs").readFileSync(process.argv[1]));
	console.log(r.threads.map((t) => t.name).join(" ") + " / " + r.topSelf[0]?.name)' "$WORK/beta.json")
[ "$names" = "beta / beta_spin" ] || fail "report --tid $beta: threads and top function '$names', expected 'beta / beta_spin'"
ok "report --tid $beta: only beta, whose top self function is beta_spin"

"$BPFPROF" report --rows 5 "$WORK/pid.json.gz" >"$WORK/report.txt" || fail "the text report failed"
indent <"$WORK/report.txt"
for want in '^recording: ' '^CPU by process' '^CPU by thread' ' alpha (' ' beta (' \
	'^Top functions by on-CPU self time' 'alpha_heavy$' 'beta_spin$' '^Off-CPU time by reason' \
	'^Syscalls ' '^Slowest markers'; do
	grep -q -- "$want" "$WORK/report.txt" || fail "the text report has no line matching '$want'"
done
ok "the text report has every section and names the workers and their functions"

"$BPFPROF" report --pid 1 "$WORK/pid.json.gz" >/dev/null 2>"$WORK/nomatch.err" && fail "report --pid 1 (not in it) exited 0"
grep -q 'no thread of .* matches --pid/--tid' "$WORK/nomatch.err" || fail "report --pid 1: $(cat "$WORK/nomatch.err")"
ok "a --pid that is not in the profile is a one-line error"
