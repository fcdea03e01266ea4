#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
#
# No -o and no -F: the profile goes to profile.json.gz in the current
# directory, gzip-compressed, at the default rate, with mode 0600 (--mode
# 0644 shares it).
. "$(dirname "$0")/common.sh"
require_root
make_workdir

cd "$WORK" || fail "cannot enter $WORK"
run_bpfprof 60 -- "$FORKER" 1
expect_success
[ -f "$WORK/profile.json.gz" ] || fail "no profile.json.gz in the working directory: $(ls "$WORK")"
ok "profile.json.gz was written to the working directory"
# Private by default, as perf.data is: it shows every process's command line.
[ "$(stat -c %a "$WORK/profile.json.gz")" = 600 ] ||
	fail "profile.json.gz has mode $(stat -c %a "$WORK/profile.json.gz"), not 600"
ok "the profile has mode 0600"
run_bpfprof 60 --mode 0644 -o "$WORK/shared.json.gz" -- "$FORKER" 1
expect_success
[ "$(stat -c %a "$WORK/shared.json.gz")" = 644 ] ||
	fail "--mode 0644: the profile has mode $(stat -c %a "$WORK/shared.json.gz")"
ok "--mode 0644 shares it"
run_check valid --profile "$WORK/profile.json.gz" --gzip --min-samples 1
