#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
#
# Go stacks (issue 26), on programs built here by Debian's golang-go as a
# user would build them (tests/workloads/go):
#
#   go       gowork, hot in crypto/sha256's assembly (BP used as a register):
#            whole goroutine stacks through .gopclntab, names from its symbols
#   go_sw    the same built -ldflags='-s -w' (no symbol table, no DWARF):
#            the same stacks, named from .gopclntab
#   go_fp    the control: gowork unwound with frame pointers only, where
#            fewer than half may be whole, so the go run measures what it claims
#   cgo      gocgo: Go calling C and C calling back into Go, whole across
#            both switches of stack
#   cgo_pie  the same built -buildmode=pie: linked by gcc, its Go table has
#            no section of its own (inside .data.rel.ro) and its text start
#            is a relocation
#   go_park  gopark, goroutines parking all the time: stacks on g0 under
#            runtime.mcall cross its switch once, to the parked goroutine
#            (issue 37: Go's rows restore BP, no staircase of mcall frames)
#
# Usage: go.sh go|go_sw|go_fp|cgo|cgo_pie|go_park
. "$(dirname "$0")/common.sh"
require_root
make_workdir

MODE=${1:?usage: go.sh go|go_sw|go_fp|cgo|cgo_pie|go_park}
SRC=$(dirname "$0")/../workloads/go
command -v go >/dev/null || fail "go is not installed (scripts/install-deps.sh --test installs golang-go)"
# The build cache beside the build tree: the first cgo build takes ~20 s, later ones ~1 s.
export GOCACHE=${TEST_OUT_DIR%/*}/go-cache GOPATH=$WORK/gopath HOME=${HOME:-$WORK} GOFLAGS=-buildvcs=false
export GO111MODULE=off CGO_ENABLED=1

build() { # build OUTPUT SOURCE [FLAGS...]
	local out=$1 src=$2
	shift 2
	log "\$ go build $* -o $out $src"
	go build "$@" -o "$out" "$src" >"$WORK/go-build.log" 2>&1 || fail "go build failed: $(head -n 5 "$WORK/go-build.log")"
}

case $MODE in
go | go_fp)
	build "$WORK/gowork" "$SRC/gowork.go"
	prog=$WORK/gowork
	;;
go_sw)
	build "$WORK/gowork" "$SRC/gowork.go" -ldflags=-s\ -w
	prog=$WORK/gowork
	readelf -SW "$prog" | grep -q '\.symtab' && fail "$prog still has a symbol table: -s -w did not strip it"
	readelf -SW "$prog" | grep -q '\.debug_info' && fail "$prog still has DWARF: -s -w did not strip it"
	ok "$prog has neither .symtab nor DWARF, only .gopclntab"
	;;
cgo)
	build "$WORK/gocgo" "$SRC/gocgo.go"
	prog=$WORK/gocgo
	;;
cgo_pie)
	build "$WORK/gocgo" "$SRC/gocgo.go" -buildmode=pie
	prog=$WORK/gocgo
	readelf -SW "$prog" | grep -q gopclntab && fail "$prog has a .gopclntab section: it does not test the PIE layout"
	readelf -hW "$prog" | grep -q "DYN (" || fail "$prog is not a PIE"
	ok "$prog is a PIE whose Go table has no section of its own"
	;;
go_park)
	build "$WORK/gopark" "$SRC/gopark.go"
	prog=$WORK/gopark
	;;
*)
	fail "unknown mode $MODE"
	;;
esac

unwind=(--unwind cfi)
expect=()
if [ "$MODE" = go_fp ]; then
	unwind=(--unwind fp)
	expect=(--expect-broken)
fi
run_bpfprof 60 -v "${unwind[@]}" -o "$WORK/go.json.gz" -- "$prog" 2
expect_success
read -r _ _ _ pid < <(grep -m 1 ": truth pid " "$WORK/bpfprof.out")
[[ $pid =~ ^[0-9]+$ ]] || fail "$prog did not print its truth line: $(head -n 3 "$WORK/bpfprof.out")"
ok "$(grep "^bpfprof: user stacks" "$WORK/bpfprof.err")"
if [ "$MODE" = cgo ] || [ "$MODE" = cgo_pie ]; then
	check=(--cgo)
elif [ "$MODE" = go_park ]; then
	check=(--park)
else
	check=(--go "${expect[@]}")
fi
log "\$ go_checks.mjs ${check[*]} --profile $WORK/go.json.gz --pid $pid"
node_check go_checks.mjs "${check[@]}" --profile "$WORK/go.json.gz" --gzip --pid "$pid" ||
	fail "Go checks failed"
