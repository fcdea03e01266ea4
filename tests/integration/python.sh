#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
#
# Python functions in the stacks (issue 26): Debian's own /usr/bin/python3
# (3.11, stripped, no frame pointers) running tests/workloads/pyfuncs.py,
# three nested pure-Python functions on two threads. Asks nothing of the
# program: no flag, no module, no restart.
#
#   before  started before the recording, then recorded with -p PID
#   during  started by bpfprof (-- python3 ...), and a child it forks; then
#           bpfprof view serves pyfuncs.py to the source view (/source/v1),
#           as it serves C sources
#   fp      the control: --unwind fp (no Python frames), where fewer than
#           half of the samples may show the functions
#   pool    every CPython at once (issue 40): tests/workloads/pypool.py
#           under each of ~/.pyenv/versions' 2.7, 3.6-3.13 and Debian's
#           python3.11, in ONE recording with -p, checked per process
#           (pypool_checks.mjs): Python frames for every pool thread on CPU,
#           and for a thread asleep in time.sleep in its off-CPU samples.
#           Prints the versions it ran; a version missing fails, by name
#           (PYTHON_POOL_VERSIONS overrides the list on another machine).
#
# Usage: python.sh before|during|fp|pool
. "$(dirname "$0")/common.sh"
require_root
make_workdir

MODE=${1:?usage: python.sh before|during|fp|pool}
PY=/usr/bin/python3
# Run from a directory every user may read: bpfprof view shows root no other
# source file (issue 27), and the tree may be in a 0700 directory (a clone in /root).
PUBLIC_DIR=$(mktemp -d /var/tmp/bpfprof-python-public.XXXXXX) || fail "mktemp -d failed"
trap '[ -z "$PUBLIC_DIR" ] || rm -rf "$PUBLIC_DIR"; common_exit' EXIT
chmod 0755 "$PUBLIC_DIR"
install -m 0644 "$(dirname "$0")/../workloads/pyfuncs.py" "$PUBLIC_DIR/pyfuncs.py" || fail "cannot copy pyfuncs.py"
SCRIPT=$PUBLIC_DIR/pyfuncs.py
[ -x "$PY" ] || fail "$PY is missing: scripts/install-deps.sh --test installs python3"
check=()
case $MODE in
before)
	# It outlives the recording whatever bpfprof's start-up takes (its truth
	# lines come first); the exit kills it.
	start_background pyfuncs "$PY" "$SCRIPT" 60
	for ((i = 0; i < 200; i++)); do
		grep -q "^pyfuncs: truth pid" "$WORK/pyfuncs.out" && break
		sleep 0.05
	done
	read -r _ _ _ pid < <(grep -m 1 "^pyfuncs: truth pid" "$WORK/pyfuncs.out")
	[[ $pid =~ ^[0-9]+$ ]] || fail "pyfuncs.py did not start: $(cat "$WORK/pyfuncs.out")"
	run_bpfprof 60 -v -p "$pid" -d 2 -o "$WORK/python.json.gz"
	TRUTH=$WORK/pyfuncs.out
	;;
pool)
	# Every version's code objects are named (lang/python_code_layouts.c): the
	# check asks for the names in each.
	EXPECT=${PYTHON_POOL_VERSIONS:-2.7 3.6 3.7 3.8 3.9 3.10 3.11 3.12 3.13}
	NAMED=$(echo "$EXPECT" | tr ' ' ,)
	pids=() truths=() missing=()
	install -m 0644 "$(dirname "$0")/../workloads/pypool.py" "$PUBLIC_DIR/pypool.py" || fail "cannot copy pypool.py"
	for v in $EXPECT; do
		py=$(ls -d "$HOME"/.pyenv/versions/"$v".*/bin/python"$v" 2>/dev/null | head -n 1)
		[ -x "$py" ] || { missing+=("$v"); continue; }
		start_background "pypool-$v" "$py" "$PUBLIC_DIR/pypool.py" 60 2
		pids+=("$BG_PID") truths+=(--truth "$WORK/pypool-$v.out")
	done
	start_background pypool-debian "$PY" "$PUBLIC_DIR/pypool.py" 60 2
	pids+=("$BG_PID") truths+=(--truth "$WORK/pypool-debian.out")
	[ ${#missing[@]} -eq 0 ] || fail "Python versions not installed under ~/.pyenv/versions: ${missing[*]}"
	for f in "$WORK"/pypool-*.out; do
		for ((i = 0; i < 400; i++)); do
			grep -q "^pypool: truth pid" "$f" && break
			sleep 0.05
		done
		grep -q "^pypool: truth pid" "$f" || fail "$(basename "$f" .out) did not start: $(cat "$f")"
	done
	run_bpfprof 90 -v -p "$(IFS=,; echo "${pids[*]}")" -d 3 --off-cpu -o "$WORK/python.json.gz"
	expect_success
	expected=$(echo "$EXPECT" | tr ' ' ,)
	log "\$ pypool_checks.mjs --profile $WORK/python.json.gz ${truths[*]} --expect $expected --named $NAMED"
	node_check pypool_checks.mjs --profile "$WORK/python.json.gz" --gzip "${truths[@]}" --expect "$expected" \
		--named "$NAMED" || fail "every-CPython checks failed"
	ok "$(grep -h "^pypool: truth" "$WORK"/pypool-*.out | awk '{ print $6 }' | sort -V | tr '\n' ' ')ran in one recording"
	exit 0
	;;
during | fp)
	unwind=()
	[ "$MODE" = fp ] && unwind=(--unwind fp) check=(--expect-broken)
	run_bpfprof 60 -v "${unwind[@]}" -o "$WORK/python.json.gz" -- "$PY" "$SCRIPT" 2 --fork
	TRUTH=$WORK/bpfprof.out
	check+=(--fork)
	;;
*)
	fail "unknown mode $MODE"
	;;
esac
expect_success
ok "$(grep "^bpfprof: user stacks" "$WORK/bpfprof.err")"
log "\$ python_checks.mjs --profile $WORK/python.json.gz --truth $TRUTH ${check[*]}"
node_check python_checks.mjs --profile "$WORK/python.json.gz" --gzip --truth "$TRUTH" "${check[@]}" ||
	fail "Python checks failed"
[ "$MODE" = during ] || exit 0

# Frame quality per interpreter version (issue 40), its version from the
# process's python_info: in the recording's line and, the same, in report.
version=$("$PY" -c 'import sys; print("%d.%d" % sys.version_info[:2])')
line=$(grep -m 1 '^bpfprof: runtime frames: ' "$WORK/bpfprof.err") ||
	fail "the recording printed no runtime frames line"
re="Python ${version//./\\.} ([0-9.]+)% of ([0-9]+)"
[[ $line =~ $re ]] || fail "the runtime frames line tells no Python $version share: $line"
share=${BASH_REMATCH[1]} samples=${BASH_REMATCH[2]}
[ "$samples" -gt 0 ] || fail "Python $version: no samples in its interpreter: $line"
ok "runtime frames of Python $version: $share% of $samples samples in its interpreter"
"$BPFPROF" report "$WORK/python.json.gz" >"$WORK/report.txt" 2>&1 || fail "bpfprof report failed: $(cat "$WORK/report.txt")"
grep -q "^Python $version frames: $share% of $samples on-CPU samples in its interpreter name a Python function" "$WORK/report.txt" ||
	fail "report does not tell Python $version's $share% of $samples: $(grep -i python "$WORK/report.txt")"
ok "report tells Python $version's frames as the recording did"

# The source view: the front-end asks the symbol server for a frame's file.
log "\$ bpfprof view $WORK/python.json.gz --no-open &"
: >"$WORK/view.err"
env --default-signal=INT,TERM "$BPFPROF" view "$WORK/python.json.gz" --no-open >"$WORK/view.out" 2>"$WORK/view.err" &
VIEW_PID=$!
BACKGROUND_PIDS+=("$VIEW_PID")
wait_view_serving "$VIEW_PID"
curl -s -X POST --data-binary "{\"debugName\":\"pyfuncs.py\",\"debugId\":\"0\",\"file\":\"$SCRIPT\"}" \
	"${URL%/*}/source/v1" >"$WORK/source.json" || fail "POST /source/v1 failed"
"$NODE" -e 'const a = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8"));
process.exit(a.source === require("fs").readFileSync(process.argv[2], "utf8") ? 0 : 1);' "$WORK/source.json" "$SCRIPT" ||
	fail "/source/v1 did not answer $SCRIPT with its text: $(head -c 300 "$WORK/source.json")"
ok "/source/v1 answers $SCRIPT with its text, as the source view asks"
kill -INT "$VIEW_PID"
wait "$VIEW_PID"
