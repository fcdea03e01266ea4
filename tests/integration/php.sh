#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
#
# PHP functions in the stacks (issue 40): Debian's own /usr/bin/php8.2 (an
# NTS build, stripped) started by bpfprof, running tests/workloads/phpfuncs.php,
# three nested hot functions, for 2 s, in it and in a child it forks. Asks nothing of the program: no flag,
# no extension. php_checks.mjs checks the innermost is named in >= 90 % of
# the samples, under its two callers in order, with file and line.
#
# Usage: php.sh
. "$(dirname "$0")/common.sh"
require_root
make_workdir

PHP=/usr/bin/php8.2
[ -x "$PHP" ] || fail "$PHP is missing: scripts/install-deps.sh --test installs php8.2-cli"
SCRIPT=$(realpath "$(dirname "$0")/../workloads/phpfuncs.php")
log "$("$PHP" -v | head -n 1)"
# A child forked at the start (as php-fpm forks its workers) gets its parent's PHP.
run_bpfprof 60 -v -o "$WORK/php.json.gz" -- "$PHP" "$SCRIPT" 2 --fork
expect_success
ok "$(grep "^bpfprof: user stacks" "$WORK/bpfprof.err")"
# The frame-quality line names the version: "runtime frames: PHP 8.2 99.9% of ...".
grep -q "^bpfprof: runtime frames: .*PHP 8\.2 [0-9.]*% of" "$WORK/bpfprof.err" ||
	fail "no 'PHP 8.2' in the runtime frames line: $(grep "^bpfprof: runtime frames" "$WORK/bpfprof.err")"
ok "$(grep "^bpfprof: runtime frames" "$WORK/bpfprof.err")"
log "\$ php_checks.mjs --profile $WORK/php.json.gz --truth $WORK/bpfprof.err"
node_check php_checks.mjs --profile "$WORK/php.json.gz" --gzip --truth "$WORK/bpfprof.err" --fork ||
	fail "PHP checks failed"
# bpfprof report says the version too, from the profile's "PHP versions".
"$BPFPROF" report "$WORK/php.json.gz" >"$WORK/report.txt" 2>&1 || fail "bpfprof report failed: $(head -c 300 "$WORK/report.txt")"
grep -q "^PHP 8\.2 frames: [0-9.]*% of" "$WORK/report.txt" ||
	fail "bpfprof report names no 'PHP 8.2 frames': $(head -n 5 "$WORK/report.txt")"
ok "$(grep "^PHP 8\.2 frames" "$WORK/report.txt")"
