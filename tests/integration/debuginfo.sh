#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
#
# DWARF (issue 4): `bpfprof -- debuginfo 2`, where debuginfo is a stripped
# binary (no .symtab, no DWARF, no debug link) whose symbols and DWARF exist
# only in debuginfo.debug, installed for the run as
# /usr/lib/debug/.build-id/xx/rest.debug, bpfprof's default debug root. The
# profile must show:
#   - debuginfo_outer_loop, a static function named only by the debug file,
#     in >= 90 % of the workload's on-CPU samples;
#   - debuginfo_inlined_mix, which has no code or symbol of its own, as an
#     inline frame (inlineDepth >= 1) right under the outer loop's frame at
#     the same address, with a line of its own body, the outer frame at the
#     line of the call, and main's frame above that at the line of its call
#     of the outer loop (a return address, looked up one byte back);
#   - both functions with their source file and the line they start at.
# The expected lines are read from the workload's source, not written here.
#
# A first, shorter run without the debug file is the control: the same
# binary must then show no such names, only offsets into "debuginfo", so the
# names of the second run came from the debug file.
. "$(dirname "$0")/common.sh"
require_root
make_workdir

: "${DEBUGINFO_STRIPPED:?DEBUGINFO_STRIPPED is not set}" "${DEBUGINFO_DEBUG:?}" "${DEBUGINFO_SOURCE:?}"
OUTER=debuginfo_outer_loop
INLINED=debuginfo_inlined_mix
DEBUG_ROOT=/usr/lib/debug

for tool in readelf cmp; do
	command -v "$tool" >/dev/null || fail "$tool is not installed; the preconditions need it"
done

# --- Preconditions: without them the test could pass for the wrong reason. ----

[ -x "$DEBUGINFO_STRIPPED" ] || fail "the stripped workload $DEBUGINFO_STRIPPED is missing"
[ -r "$DEBUGINFO_DEBUG" ] || fail "the workload's debug file $DEBUGINFO_DEBUG is missing"

sections=$(readelf -SW "$DEBUGINFO_STRIPPED") || fail "readelf cannot read $DEBUGINFO_STRIPPED"
if grep -qE '\.symtab|\.debug_|\.gnu_debuglink' <<<"$sections"; then
	fail "$DEBUGINFO_STRIPPED is not fully stripped: $(grep -oE '\.symtab|\.debug_[a-z_]+|\.gnu_debuglink' \
		<<<"$sections" | tr '\n' ' ')"
fi
if readelf -sW "$DEBUGINFO_STRIPPED" | grep -qE "\\b($OUTER|$INLINED)\\b"; then
	fail "$DEBUGINFO_STRIPPED still has a symbol for $OUTER or $INLINED"
fi
ok "$(basename "$DEBUGINFO_STRIPPED") has no .symtab, no DWARF, no debug link, no symbol for $OUTER"

# readelf complains that a debug file has no program interpreter (its
# .interp is NOBITS); the symbol table it prints is what counts.
debug_syms=$(readelf -sW "$DEBUGINFO_DEBUG" 2>/dev/null)
grep -q "Symbol table '.symtab'" <<<"$debug_syms" || fail "$DEBUGINFO_DEBUG has no .symtab"
grep -qE "\\b$OUTER\$" <<<"$debug_syms" || fail "$DEBUGINFO_DEBUG has no symbol $OUTER"
# Fully inlined: only DWARF can put it in a stack.
if grep -qE "\\b$INLINED" <<<"$debug_syms"; then
	fail "$INLINED has a symbol in $DEBUGINFO_DEBUG: it was not inlined everywhere"
fi
# The DWARF must say where it was inlined; -O0 or a compiler that declined
# always_inline would leave no inlined-subroutine scope to test.
readelf --debug-dump=info "$DEBUGINFO_DEBUG" 2>/dev/null | grep -q DW_TAG_inlined_subroutine ||
	fail "$DEBUGINFO_DEBUG describes no inlined call"
ok "$(basename "$DEBUGINFO_DEBUG") has the symbol $OUTER and DWARF of inlined calls, and no symbol $INLINED"

build_id() {
	readelf -n "$1" 2>/dev/null | awk '/Build ID:/ { print $3; exit }'
}
bid=$(build_id "$DEBUGINFO_STRIPPED")
[[ $bid =~ ^[0-9a-f]{8,}$ ]] || fail "$DEBUGINFO_STRIPPED has no GNU build-id note (found '$bid')"
[ "$(build_id "$DEBUGINFO_DEBUG")" = "$bid" ] ||
	fail "$DEBUGINFO_DEBUG has build-id '$(build_id "$DEBUGINFO_DEBUG")', not the binary's $bid"
DEBUG_TARGET=$DEBUG_ROOT/.build-id/${bid:0:2}/${bid:2}.debug
ok "build-id $bid: the debug file belongs at $DEBUG_TARGET"

# --- Expected lines, from the workload's source -------------------------------

# decl_line FUNC: sets LINE to FUNC's definition line (kernel style: one line
# starting with "static"), where DWARF's decl_line points.
decl_line() {
	LINE=$(grep -n "^static .*\\b$1(" "$DEBUGINFO_SOURCE" | cut -d: -f1)
	[[ $LINE =~ ^[0-9]+$ ]] || fail "no single definition line for $1 in $DEBUGINFO_SOURCE (found: $LINE)"
}

# end_line FROM: sets LINE to the closing brace of the function defined at
# FROM, the first "}" line after it.
end_line() {
	LINE=$(awk -v from="$1" 'NR > from && /^}/ { print NR; exit }' "$DEBUGINFO_SOURCE")
	[[ $LINE =~ ^[0-9]+$ ]] || fail "no closing brace after line $1 in $DEBUGINFO_SOURCE"
}

decl_line "$OUTER"
outer_from=$LINE
end_line "$outer_from"
outer_to=$LINE
decl_line "$INLINED"
inlined_from=$LINE
end_line "$inlined_from"
inlined_to=$LINE

# marker_line TEXT: sets LINE to the one line that holds /* TEXT */.
marker_line() {
	LINE=$(grep -nF "/* $1 */" "$DEBUGINFO_SOURCE" | cut -d: -f1)
	[[ $LINE =~ ^[0-9]+$ ]] || fail "no single '$1' marker in $DEBUGINFO_SOURCE (found: $LINE)"
}

marker_line 'debuginfo: call site'
call_line=$LINE
((outer_from < call_line && call_line < outer_to)) ||
	fail "the call site (line $call_line) is not inside $OUTER (lines $outer_from-$outer_to)"
marker_line 'debuginfo: outer call'
outer_call_line=$LINE
log "source lines: $OUTER $outer_from-$outer_to, $INLINED $inlined_from-$inlined_to, called at" \
	"$call_line; $OUTER called at $outer_call_line"

# --- The debug file, installed for the second run only ------------------------

CREATED_DIRS=()
INSTALLED=
remove_debug_file() {
	local i
	[ -n "$INSTALLED" ] && rm -f "$INSTALLED"
	INSTALLED=
	# Innermost first; only directories this test made, and only if empty.
	for ((i = ${#CREATED_DIRS[@]} - 1; i >= 0; i--)); do
		rmdir "${CREATED_DIRS[i]}" 2>/dev/null
	done
	CREATED_DIRS=()
}
trap 'remove_debug_file; stop_burner' EXIT

install_debug_file() {
	local dir
	for dir in "$DEBUG_ROOT" "$DEBUG_ROOT/.build-id" "$(dirname "$DEBUG_TARGET")"; do
		if [ ! -d "$dir" ]; then
			mkdir "$dir" || fail "cannot create $dir"
			CREATED_DIRS+=("$dir")
		fi
	done
	INSTALLED=$DEBUG_TARGET
	cp "$DEBUGINFO_DEBUG" "$DEBUG_TARGET" || fail "cannot install $DEBUG_TARGET"
	ok "installed $DEBUG_TARGET${CREATED_DIRS[*]:+ (created ${CREATED_DIRS[*]})}"
}

# The build-id is this build's own, so a file already there is this
# test's, left by a run that was killed before its EXIT trap; anything else
# at that path is not ours to touch.
if [ -e "$DEBUG_TARGET" ]; then
	cmp -s "$DEBUG_TARGET" "$DEBUGINFO_DEBUG" ||
		fail "$DEBUG_TARGET exists and is not this build's debug file; remove it first"
	log "removing $DEBUG_TARGET, left by an earlier run of this test"
	rm -f "$DEBUG_TARGET" || fail "cannot remove $DEBUG_TARGET"
fi

# workload_pid: sets PID to the workload's pid, which bpfprof prints first,
# once the workload has finished its loop.
workload_pid() {
	PID=$(head -n 1 "$WORK/bpfprof.out")
	[[ $PID =~ ^[0-9]+$ ]] || fail "the workload's pid is not the first line of bpfprof's stdout"
	grep -q '^debuginfo: done [0-9]' "$WORK/bpfprof.out" ||
		fail "the workload did not finish: $(tail -n 3 "$WORK/bpfprof.out")"
}

# --- Control: no debug file, no names -----------------------------------------

log ""
log "control run: no debug file installed"
run_bpfprof 60 -o "$WORK/stripped.json.gz" -- "$DEBUGINFO_STRIPPED" 1
expect_success
workload_pid
mv "$WORK/bpfprof.out" "$WORK/stripped.out"
mv "$WORK/bpfprof.err" "$WORK/stripped.err"
run_check debuginfo --profile "$WORK/stripped.json.gz" --gzip --pid "$PID" --without-debug-file

# --- With the debug file ------------------------------------------------------

log ""
log "run with the debug file installed"
install_debug_file
run_bpfprof 60 -o "$WORK/debuginfo.json.gz" -- "$DEBUGINFO_STRIPPED" 2
expect_success
workload_pid
run_check debuginfo --profile "$WORK/debuginfo.json.gz" --gzip --pid "$PID" \
	--outer-lines "$outer_from-$outer_to" --inlined-lines "$inlined_from-$inlined_to" \
	--call-line "$call_line" --outer-call-line "$outer_call_line"
