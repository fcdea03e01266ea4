#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
#
# Ruby methods in the stacks (issue 40): Debian's own ruby (3.1, libruby
# stripped, no frame pointers) running tests/workloads/rbfuncs.rb, three
# nested hot methods, the innermost spinning. Asks nothing of the program:
# no flag, no gem, no restart. One recording of 3 s (-- ruby ...), checked
# by ruby_checks.mjs: the innermost named in >= 90 % of the main thread's
# samples, the three nested in order with their file and lines; the
# frame-quality line and bpfprof report say "Ruby 3.1".
#
# Usage: ruby.sh
. "$(dirname "$0")/common.sh"
require_root
make_workdir

RUBY=/usr/bin/ruby
SCRIPT=$(cd "$(dirname "$0")/../workloads" && pwd)/rbfuncs.rb
[ -x "$RUBY" ] || fail "$RUBY is missing: scripts/install-deps.sh --test installs ruby"
log "ruby version: $("$RUBY" -v)"
run_bpfprof 60 -v -o "$WORK/ruby.json.gz" -- "$RUBY" "$SCRIPT" 3
expect_success
ok "$(grep "^bpfprof: user stacks" "$WORK/bpfprof.err")"
# The frame-quality line names the version met: "Ruby 3.1 99.8% of ...".
minor=$("$RUBY" -e 'print RUBY_VERSION.split(".")[0, 2].join(".")')
grep -q "^bpfprof: runtime frames: .*Ruby $minor [0-9.]*% of" "$WORK/bpfprof.err" ||
	fail "no 'Ruby $minor NN%' in the frame-quality line: $(grep "runtime frames" "$WORK/bpfprof.err")"
ok "$(grep "^bpfprof: runtime frames" "$WORK/bpfprof.err")"
log "\$ ruby_checks.mjs --profile $WORK/ruby.json.gz --truth $WORK/bpfprof.out"
node_check ruby_checks.mjs --profile "$WORK/ruby.json.gz" --gzip --truth "$WORK/bpfprof.out" ||
	fail "Ruby checks failed"
# bpfprof report says the version too, from the profile's meta.extra.
"$BPFPROF" report "$WORK/ruby.json.gz" >"$WORK/report.out" 2>&1 || fail "bpfprof report failed: $(cat "$WORK/report.out")"
grep -q "^Ruby $minor frames: [0-9.]*% of" "$WORK/report.out" ||
	fail "bpfprof report has no 'Ruby $minor frames:' line: $(head -n 5 "$WORK/report.out")"
ok "$(grep "^Ruby $minor frames:" "$WORK/report.out")"
