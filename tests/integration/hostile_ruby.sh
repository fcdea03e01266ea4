#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
#
# A local user's process that claims to be Ruby 3.1, against root's bpfprof
# (issue 40): its own libruby (tests/workloads/fakerb_lib.c) exports
# ruby_version, rb_vm_exec and ruby_current_ec, and its execution context
# points at hostile memory: a VM stack of 2^40 words, every control frame
# a Ruby frame, an iseq whose label is 2^40 bytes, whose pathobj Array has
# 2^62 elements and names /etc/shadow, whose line table has 2^32 - 1
# entries. Run by a throw-away unprivileged user, recorded 2 s with -p
# beside root's ruby running rbfuncs.rb (the control): bpfprof takes it for
# Ruby, ends on time, walks at most 128 frames a sample, names them all
# [unknown Ruby method] (the label refused), and the control keeps its names.
#
# Usage: hostile_ruby.sh (FAKERB, FAKERB_LIB: the workload and its library)
. "$(dirname "$0")/common.sh"
. "$(dirname "$0")/hostile_common.sh"
hostile_setup "hostile_ruby.sh fake" fake
: "${FAKERB:?FAKERB is not set}" "${FAKERB_LIB:?FAKERB_LIB is not set}"
RUBY=/usr/bin/ruby
[ -x "$RUBY" ] || fail "$RUBY is missing: scripts/install-deps.sh --test installs ruby"
VICTIM_PID=
CONTROL_PID=
cleanup() {
	[ -n "$VICTIM_PID" ] && kill -KILL "$VICTIM_PID" 2>/dev/null
	[ -n "$CONTROL_PID" ] && kill -KILL "$CONTROL_PID" 2>/dev/null
}
HOSTILE_CLEANUP+=(cleanup)
make_hostile_user

# The user's copies (a checkout may be 0700): fakerb finds its library beside it.
cp "$FAKERB" "$USER_DIR/fakerb"
cp "$FAKERB_LIB" "$USER_DIR/$(basename "$FAKERB_LIB")"
chown -R "$USER_NAME:" "$USER_DIR"
as_user_in_dir ./fakerb 60 >"$WORK/fakerb.out" 2>"$WORK/fakerb.err" &
VICTIM_PID=$!
"$RUBY" "$(dirname "$0")/../workloads/rbfuncs.rb" 60 >"$WORK/control.out" 2>&1 &
CONTROL_PID=$!
for ((i = 0; i < 200; i++)); do
	[ -s "$WORK/fakerb.out" ] && [ -s "$WORK/control.out" ] && break
	sleep 0.05
done
read -r fake <"$WORK/fakerb.out"
[[ $fake =~ ^[0-9]+$ ]] || fail "fakerb did not start: $(cat "$WORK/fakerb.out" "$WORK/fakerb.err")"
run_bpfprof 60 -v -p "$fake,$CONTROL_PID" -d 2 -o "$WORK/p.json.gz"
expect_success
awk -v t="$ELAPSED" 'BEGIN { exit !(t < 20) }' || fail "bpfprof took ${ELAPSED}s for a 2 s recording"
grep -q "^bpfprof: debug: Ruby frames: 2 Ruby processes at the start" "$WORK/bpfprof.err" ||
	fail "bpfprof did not take fakerb and ruby for Ruby processes: the test tests nothing"
"$NODE" --input-type=module -e '
import { Profile, CATEGORY_RUBY } from "'"$CHECK_DIR"'/profile.mjs";
const [file, fake, control] = process.argv.slice(1);
const p = Profile.fromFile(file);
const seen = (pid) => {
	let samples = 0, named = 0, most = 0;
	const names = new Set();
	for (const t of p.threads.filter((t) => String(t.pid).split(".")[0] === pid)) for (const s of p.samplesOf(t)) {
		const rb = s.path.filter((f) => p.frameCategory(f) === CATEGORY_RUBY).map((f) => p.frameFuncName(f));
		rb.forEach((n) => names.add(n));
		samples += rb.length > 0;
		named += rb[rb.length - 1] === "rb_inner";
		most = Math.max(most, rb.length);
	}
	return { samples, named, most, names: [...names] };
};
const f = seen(fake), c = seen(control);
console.log(`fakerb: ${f.samples} samples with Ruby frames, at most ${f.most} a sample; names: ${f.names.join(", ")}; ` +
	    `control: ${c.named} of ${c.samples} samples in rb_inner`);
process.exit(f.samples > 100 && f.most <= 128 && f.names.length === 1 && f.names[0] === "[unknown Ruby method]" &&
	     c.samples > 100 && c.named * 2 > c.samples ? 0 : 1);
' "$WORK/p.json.gz" "$fake" "$CONTROL_PID" >"$WORK/check.out" || fail "Ruby frames: $(cat "$WORK/check.out")"
ok "$(cat "$WORK/check.out")"
