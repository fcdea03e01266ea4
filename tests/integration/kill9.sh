#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
#
# kill -9 of a recording bpfprof (issue 20): every BPF program, map and link
# it held goes with it (they live by its file descriptors), and its
# half-written temporary output file is removed by the next run that writes
# the same profile, once it is a minute old and open nowhere.
. "$(dirname "$0")/common.sh"
require_root
make_workdir

command -v bpftool >/dev/null || fail "bpftool is not installed (scripts/install-deps.sh installs it)"
OUT=$WORK/k.json.gz

# owned KIND PID: the ids of the BPF objects of KIND (prog, map, link) whose
# fds PID holds, from /proc/PID/fdinfo ("prog_id:", "map_id:", "link_id:").
owned() {
	cat "/proc/$2/fdinfo/"* 2>/dev/null | awk -v k="$1_id:" '$1 == k { print $2 }' | sort -un | tr '\n' ' '
}

# alive KIND IDS...: those of IDS still in the kernel.
alive() {
	local kind=$1
	shift
	bpftool "$kind" show -j 2>/dev/null | "$NODE" -e '
	let s = ""; process.stdin.on("data", (d) => (s += d)).on("end", () => {
		const want = new Set(process.argv.slice(1).map(Number));
		console.log((s.trim() ? JSON.parse(s) : []).filter((o) => want.has(o.id)).map((o) => o.id).join(" "));
	});' "$@"
}

start_recording_all "$OUT"
PID=$BPFPROF_PID
sleep 0.5
progs=$(owned prog "$PID")
maps=$(owned map "$PID")
links=$(owned link "$PID")
log "   pid $PID holds programs [$progs], maps [$maps], links [$links]"
[ -n "$progs" ] && [ -n "$maps" ] || fail "bpftool shows no programs or maps of bpfprof ($PID)"
# The check below can fail: bpftool sees them now.
[ "$(alive prog $progs | wc -w)" -eq "$(wc -w <<<"$progs")" ] && [ "$(alive map $maps | wc -w)" -eq "$(wc -w <<<"$maps")" ] ||
	fail "bpftool does not list bpfprof's programs and maps while it runs"
tmp=$(find "$WORK" -maxdepth 1 -name '.k.json.gz.??????')
[ -n "$tmp" ] || fail "no temporary output file while recording: $(ls -A "$WORK")"

kill -KILL "$PID"
wait "$PID" 2>/dev/null
# The kernel frees them once the last reference is gone (after an RCU grace period).
for ((i = 0; i < 100; i++)); do
	left="$(alive prog $progs)$(alive map $maps)$(alive link $links)"
	[ -z "$left" ] && break
	sleep 0.1
done
[ -z "$left" ] || fail "after kill -9 these BPF objects remain: programs [$(alive prog $progs)], maps [$(alive map $maps)], links [$(alive link $links)]"
ok "after kill -9 none of its $(wc -w <<<"$progs") programs, $(wc -w <<<"$maps") maps or $(wc -w <<<"$links") links remain in the kernel"
[ -f "$tmp" ] || fail "the temporary file is already gone"

# A minute later, the next recording to the same file removes it.
touch -d '2 minutes ago' "$tmp"
run_bpfprof 60 -a -d 1 -o "$OUT"
expect_success
[ ! -e "$tmp" ] || fail "the stale temporary file $tmp is still there"
grep -q "removed 1 unfinished k.json.gz file(s) from $WORK" "$WORK/bpfprof.err" || fail "bpfprof did not say it removed the stale file"
[ -z "$(find "$WORK" -maxdepth 1 -name '.k.json.gz.??????')" ] || fail "temporary files are left: $(ls -A "$WORK")"
run_check valid --profile "$OUT" --gzip --min-samples 1
ok "the next run removed the stale temporary file and wrote its profile"
