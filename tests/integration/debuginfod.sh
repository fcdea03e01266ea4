#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
#
# Names for stripped code (issue 16): `bpfprof -- stripped_main 2`, whose hot
# loop is an internal (static) function of a stripped library, libstripped.so
# (no .symtab, no DWARF, no debug link; its debug file installed nowhere).
# Built here from tests/workloads/stripped_{lib,main}.c.
#
#   control     --no-debuginfod: the function is an offset into the library
#   debuginfod  a real debuginfod server (Debian's `debuginfod`), started here
#               on 127.0.0.1 and serving the library's debug file: the
#               function is named, with source lines, and the file is in
#               bpfprof's cache (under $XDG_CACHE_HOME) afterwards
#   silent      a server that accepts connections and never answers, with
#               --debuginfod-timeout 2s: bpfprof still ends within the
#               budget (plus a margin), with the profile written
#   minidebuginfo  the library with the function's symbol in .gnu_debugdata
#               (xz-compressed, as Fedora ships binaries), no server: named
. "$(dirname "$0")/common.sh"
require_root
make_workdir

SRC=$(cd "$(dirname "$0")/../workloads" && pwd)
for tool in cc objcopy strip xz readelf debuginfod debuginfod-find python3; do
	command -v "$tool" >/dev/null ||
		fail "$tool is not installed (scripts/install-deps.sh --test installs debuginfod, xz-utils)"
done

# --- The workload: a stripped library and its debug file ---------------------

LIBDIR=$WORK/lib
MINIDIR=$WORK/mini
SERVED=$WORK/served
mkdir -p "$LIBDIR" "$MINIDIR" "$SERVED"
cc -O2 -g -fPIC -shared -o "$WORK/libstripped.full.so" "$SRC/stripped_lib.c" ||
	fail "cannot build libstripped.so"
cc -O2 -o "$WORK/stripped_main" "$SRC/stripped_main.c" -L"$WORK" -l:libstripped.full.so ||
	fail "cannot build stripped_main"
objcopy --only-keep-debug "$WORK/libstripped.full.so" "$SERVED/libstripped.so.debug" ||
	fail "objcopy --only-keep-debug failed"
strip --strip-all -o "$LIBDIR/libstripped.so" "$WORK/libstripped.full.so" || fail "strip failed"
# stripped_main was linked against the full library's soname-less file name.
ln -sf libstripped.so "$LIBDIR/libstripped.full.so"
# MiniDebugInfo: the debug file's symbols without DWARF, xz-compressed into .gnu_debugdata.
objcopy --strip-debug "$SERVED/libstripped.so.debug" "$WORK/mini.elf" || fail "cannot build the MiniDebugInfo"
xz -f "$WORK/mini.elf" || fail "xz failed"
objcopy --add-section .gnu_debugdata="$WORK/mini.elf.xz" "$LIBDIR/libstripped.so" "$MINIDIR/libstripped.so" ||
	fail "cannot add .gnu_debugdata"
ln -sf libstripped.so "$MINIDIR/libstripped.full.so"

sections=$(readelf -SW "$LIBDIR/libstripped.so")
grep -qE '\.symtab|\.debug_|\.gnu_debuglink' <<<"$sections" && fail "libstripped.so is not fully stripped"
readelf -sW "$LIBDIR/libstripped.so" | grep -q stripped_hidden_hot && fail "libstripped.so still names stripped_hidden_hot"
readelf -sW "$SERVED/libstripped.so.debug" 2>/dev/null | grep -q stripped_hidden_hot ||
	fail "the debug file does not name stripped_hidden_hot"
bid=$(readelf -n "$LIBDIR/libstripped.so" | awk '/Build ID:/ { print $3; exit }')
[[ $bid =~ ^[0-9a-f]{8,}$ ]] || fail "libstripped.so has no build-id"
[ ! -e "/usr/lib/debug/.build-id/${bid:0:2}/${bid:2}.debug" ] || fail "its debug file is installed locally"
ok "libstripped.so (build-id $bid): stripped, its debug file only in $SERVED"

# --- Servers ------------------------------------------------------------------

free_port() {
	python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}
SERVER_PIDS=()
cleanup() {
	local p
	for p in "${SERVER_PIDS[@]}"; do
		kill "$p" 2>/dev/null
		wait "$p" 2>/dev/null
	done
}
trap cleanup EXIT

PORT=$(free_port)
debuginfod -p "$PORT" -d "$WORK/debuginfod.sqlite" -F "$SERVED" -t 0 -g 0 >"$WORK/debuginfod.log" 2>&1 &
SERVER_PIDS+=($!)
URL=http://127.0.0.1:$PORT
for ((i = 0; i < 300; i++)); do
	DEBUGINFOD_URLS=$URL DEBUGINFOD_CACHE_PATH=$WORK/find-cache debuginfod-find debuginfo "$bid" \
		>/dev/null 2>&1 && break
	kill -0 "${SERVER_PIDS[0]}" 2>/dev/null || fail "debuginfod exited: $(tail -n 5 "$WORK/debuginfod.log")"
	rm -rf "$WORK/find-cache"
	sleep 0.1
done
((i < 300)) || fail "debuginfod on $URL did not serve build-id $bid within 30 s"
ok "debuginfod serves $SERVED on $URL"

# A server that accepts and never says a word.
SILENT_PORT=$(free_port)
python3 -c '
import socket, sys, time
s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("127.0.0.1", int(sys.argv[1]))); s.listen(64)
conns = []
while True:
    c, _ = s.accept(); conns.append(c)
' "$SILENT_PORT" &
SERVER_PIDS+=($!)

# workload_pid: PID from the workload's first line.
workload_pid() {
	read -r _ _ _ PID < <(grep -m 1 '^stripped: truth pid ' "$WORK/bpfprof.out")
	[[ $PID =~ ^[0-9]+$ ]] || fail "stripped_main did not print its pid: $(head -n 3 "$WORK/bpfprof.out")"
}

check_profile() {
	log "\$ stripped_checks.mjs --profile $1 --pid $PID ${*:2}"
	node_check stripped_checks.mjs --profile "$1" --gzip --pid "$PID" "${@:2}" ||
		fail "stripped checks failed"
}

export DEBUGINFOD_URLS=$URL
export XDG_CACHE_HOME=$WORK/xdg
unset DEBUGINFOD_CACHE_PATH

log ""
log "control: --no-debuginfod"
LD_LIBRARY_PATH=$LIBDIR run_bpfprof 60 --no-debuginfod -o "$WORK/control.json.gz" -- "$WORK/stripped_main" 2
expect_success
control_elapsed=$ELAPSED
workload_pid
check_profile "$WORK/control.json.gz" --expect unnamed
[ ! -e "$XDG_CACHE_HOME/bpfprof/debuginfod" ] || fail "--no-debuginfod still created a debuginfod cache"

log ""
log "debuginfod: DEBUGINFOD_URLS=$URL"
LD_LIBRARY_PATH=$LIBDIR run_bpfprof 60 -v -o "$WORK/debuginfod.json.gz" -- "$WORK/stripped_main" 2
expect_success
workload_pid
check_profile "$WORK/debuginfod.json.gz" --expect named --lines
cached=$(find "$XDG_CACHE_HOME/bpfprof/debuginfod" -path "*$bid*" -name debuginfo 2>/dev/null | head -n 1)
[ -n "$cached" ] || fail "the debug file is not in bpfprof's cache $XDG_CACHE_HOME/bpfprof/debuginfod"
ok "the debug file is cached as $cached"

log ""
log "silent server, --debuginfod-timeout 2s"
XDG_CACHE_HOME=$WORK/xdg-silent DEBUGINFOD_URLS=http://127.0.0.1:$SILENT_PORT LD_LIBRARY_PATH=$LIBDIR \
	run_bpfprof 60 --debuginfod-timeout 2s -o "$WORK/silent.json.gz" -- "$WORK/stripped_main" 1
expect_success
workload_pid
# Against the control run of this machine (start-up and writing as slow as
# it is here, with a workload 1 s longer): at most the 2 s budget more, and a
# few seconds for the stalled connections, far from libdebuginfod's own 90 s.
awk -v e="$ELAPSED" -v c="$control_elapsed" 'BEGIN { exit !(e < c - 1 + 2 + 5) }' ||
	fail "bpfprof took ${ELAPSED}s against a silent server with a 2 s budget, the control ${control_elapsed}s with a workload 1 s longer"
ok "a silent server held bpfprof ${ELAPSED}s in all (the control ${control_elapsed}s with 1 s more workload; 2 s budget)"
[ -s "$WORK/silent.json.gz" ] || fail "no profile was written"
check_profile "$WORK/silent.json.gz" --expect unnamed

log ""
log "MiniDebugInfo: .gnu_debugdata, no server"
LD_LIBRARY_PATH=$MINIDIR run_bpfprof 60 --no-debuginfod -o "$WORK/mini.json.gz" -- "$WORK/stripped_main" 2
expect_success
workload_pid
check_profile "$WORK/mini.json.gz" --expect named
