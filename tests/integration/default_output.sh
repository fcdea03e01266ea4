#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
#
# No -o and no -F: the profile goes to profile.json.gz in the current
# directory, gzip-compressed, at the default rate.
. "$(dirname "$0")/common.sh"
require_root
make_workdir

cd "$WORK" || fail "cannot enter $WORK"
run_bpfprof 60 -- "$FORKER" 1
expect_success
[ -f "$WORK/profile.json.gz" ] || fail "no profile.json.gz in the working directory: $(ls "$WORK")"
ok "profile.json.gz was written to the working directory"
run_check valid --profile "$WORK/profile.json.gz" --gzip --min-samples 1
