#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
#
# The first things a person sees (issue 28).
#
#   command  -- spawner 50 20: the tracks in start order with the command
#            first and selected, the 50 children of ~30 ms hidden at first
#            and said to be (Profile Info, end-of-run summary), the profile
#            starting when the command does, Profile Info without "Main
#            process ended" or "Re-symbolicate profile", kernel functions
#            with a file the source view shows (first_view_checks.mjs).
#   help     --help (of each command) and the man page fit 80 columns, and
#            no example is broken into two lines by the terminal width.
#   view     --view prints no "view it with: bpfprof view" hint: it serves
#            the profile itself, and says where.
#
# Usage: first_view.sh command|help|view
. "$(dirname "$0")/common.sh"
make_workdir

MODE=${1:?usage: first_view.sh command|help|view}
OUT=$WORK/p.json.gz

# too_wide NAME FILE: fails when a line of FILE is wider than 80 columns
# (characters, not bytes: the man page has ⟨⟩ and “”).
too_wide() {
	local wide
	wide=$("$NODE" -e 'for (const l of require("fs").readFileSync(process.argv[1], "utf8").split("\n"))
		if ([...l].length > 80) console.log(`${[...l].length}: ${l}`);' "$2")
	[ -z "$wide" ] || fail "$1 has lines wider than 80 columns:
$wide"
}

case $MODE in
command)
	require_root
	# -v: bpfprof says when it attached and when the profile starts.
	run_bpfprof 60 -v -o "$OUT" -- "$SPAWNER" 50 20
	expect_success
	cmd_pid=$(sed -n 's/^spawner: truth self \([0-9]*\).*/\1/p' "$WORK/bpfprof.err" | head -1)
	[[ $cmd_pid =~ ^[0-9]+$ ]] || fail "spawner did not say its pid: $(tail -3 "$WORK/bpfprof.err")"
	node_check first_view_checks.mjs --profile "$OUT" --pid "$cmd_pid" \
		--stderr "$WORK/bpfprof.err" || fail "the first view is not what the recording was about"
	;;
help)
	for cmd in "" continuous view report; do
		# shellcheck disable=SC2086 # the empty command is no argument
		"$BPFPROF" $cmd --help >"$WORK/help.txt" 2>&1 || fail "bpfprof $cmd --help failed"
		too_wide "bpfprof $cmd --help" "$WORK/help.txt"
		ok "bpfprof $cmd --help: $(wc -l <"$WORK/help.txt") lines, none wider than 80 columns"
	done
	# argp fills paragraphs to the width, and breaks a line wherever it must:
	# the examples must come out as written, as on a terminal of any width.
	"$BPFPROF" --help | sed -n '/^EXAMPLES:/,/^$/p' >"$WORK/examples.txt"
	ARGP_HELP_FMT=rmargin=500 "$BPFPROF" --help | sed -n '/^EXAMPLES:/,/^$/p' >"$WORK/examples.wide"
	[ "$(wc -l <"$WORK/examples.txt")" -ge 8 ] || fail "no EXAMPLES in bpfprof --help"
	diff -u "$WORK/examples.wide" "$WORK/examples.txt" >"$WORK/examples.diff" ||
		fail "the examples of bpfprof --help break at 80 columns:
$(cat "$WORK/examples.diff")"
	ok "the $(wc -l <"$WORK/examples.txt") lines of examples are as written at 80 columns"
	if command -v man >/dev/null && command -v col >/dev/null; then
		MAN=$(dirname "$0")/../../packaging/bpfprof.1
		MANWIDTH=80 man -l "$MAN" 2>/dev/null | col -bx >"$WORK/man.txt"
		[ -s "$WORK/man.txt" ] || fail "man cannot render $MAN"
		too_wide "the man page" "$WORK/man.txt"
		ok "the man page, rendered for 80 columns: $(wc -l <"$WORK/man.txt") lines, none wider"
	fi
	;;
view)
	require_root
	log "\$ bpfprof --view -o $OUT -- sleep 0.3 &"
	env --default-signal=INT,TERM "$BPFPROF" --view -o "$OUT" -- sleep 0.3 \
		>"$WORK/view.out" 2>"$WORK/view.err" &
	VIEW_PID=$!
	trap 'kill -KILL "$VIEW_PID" 2>/dev/null; common_exit' EXIT
	wait_view_serving "$VIEW_PID"
	kill -INT "$VIEW_PID"
	wait "$VIEW_PID" || fail "bpfprof --view exited non-zero after SIGINT"
	log "stderr:"
	indent <"$WORK/view.err"
	grep -q "^bpfprof: wrote $OUT" "$WORK/view.err" || fail "bpfprof --view did not say it wrote $OUT"
	if grep -q "view it with" "$WORK/view.err"; then
		fail "bpfprof --view tells to view it with bpfprof view, then serves it itself: $(grep "view it with" "$WORK/view.err")"
	fi
	ok "bpfprof --view says where it serves the profile, and no 'view it with: bpfprof view'"
	;;
*)
	fail "unknown mode $MODE"
	;;
esac
