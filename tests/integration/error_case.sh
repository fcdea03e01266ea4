#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
#
# One error case of the bpfprof CLI contract: bpfprof must exit with a
# non-zero status of its own (not a crash, not a timeout), print exactly one
# line on stderr that starts with "bpfprof: error: " and names what failed, and
# leave no output file behind.
#
# Usage: error_case.sh CASE   (the cases are listed at the bottom)
. "$(dirname "$0")/common.sh"
require_root
make_workdir

# In a directory of its own, so that anything bpfprof leaves there is seen.
mkdir -p "$WORK/out"
OUT=$WORK/out/out.json.gz

# expect_error REGEX ARGS...: runs bpfprof ARGS and checks the failure; REGEX
# (extended, case-insensitive) must match the error line.
expect_error() {
	local what=$1 lines line outdir before
	shift
	outdir=$(dirname "$OUT")
	before=$(ls -A "$outdir" 2>/dev/null)
	run_bpfprof 60 "$@"
	if [ "$STATUS" -eq 0 ]; then
		fail "bpfprof exited 0, expected an error"
	fi
	if [ "$STATUS" -gt 125 ]; then
		fail "bpfprof ended with status $STATUS (killed by a signal or not run), expected an error exit"
	fi
	ok "exit status $STATUS (non-zero)"
	lines=$(wc -l <"$WORK/bpfprof.err")
	line=$(head -n 1 "$WORK/bpfprof.err")
	if [ "$lines" -ne 1 ] || [ "$(wc -c <"$WORK/bpfprof.err")" -ne $((${#line} + 1)) ]; then
		fail "stderr has $lines lines, expected exactly one"
	fi
	ok "exactly one line on stderr"
	case $line in
	"bpfprof: error: "?*) ok "it starts with \"bpfprof: error: \"" ;;
	*) fail "the line does not start with \"bpfprof: error: \": $line" ;;
	esac
	if ! grep -qiE -- "$what" <<<"${line#bpfprof: error: }"; then
		fail "the message does not say what failed (expected /$what/): $line"
	fi
	ok "the message says what failed (matches /$what/)"
	# Neither the profile nor a temporary file next to it.
	if [ -e "$OUT" ] || [ "$(ls -A "$outdir" 2>/dev/null)" != "$before" ]; then
		fail "a file was left behind in $outdir: $(ls -A "$outdir" | tr '\n' ' ')"
	fi
	ok "no output file left behind"
}

# A pid that is free now: a child that has been reaped, checked to be gone.
free_pid() {
	local pid
	sleep 0 &
	pid=$!
	wait "$pid"
	while [ -e "/proc/$pid" ]; do
		pid=$((pid + 1))
	done
	echo "$pid"
}

CASE=${1:?usage: error_case.sh CASE}
case $CASE in
not_root)
	# Without privileges. The binary and the output directory must be
	# reachable by nobody, which the build tree need not be.
	tmp=$(mktemp -d /tmp/bpfprof-noroot.XXXXXX) || fail "mktemp"
	trap 'rm -rf "$tmp"; stop_burner' EXIT
	chmod 755 "$tmp"
	install -m 755 "$BPFPROF" "$tmp/bpfprof"
	mkdir -m 777 "$tmp/out"
	OUT=$tmp/out/out.json.gz
	BPFPROF=$tmp/bpfprof
	BPFPROF_PREFIX=(setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=-all)
	expect_error 'root|privilege|permission|capabilit|CAP_|EPERM|not permitted' -a -d 1 -o "$OUT"
	;;
no_such_pid)
	pid=$(free_pid)
	expect_error "$pid" -p "$pid" -d 1 -o "$OUT"
	;;
pid_above_max)
	expect_error 999999999 -p 999999999 -d 1 -o "$OUT"
	;;
bad_pid_list)
	expect_error '1x|pid' -p "$$,1x" -d 1 -o "$OUT"
	;;
output_in_proc)
	OUT=/proc/nonexistent/x.json.gz
	expect_error '/proc/nonexistent' -a -d 1 -o "$OUT"
	;;
output_under_file)
	: >"$WORK/a-file"
	OUT=$WORK/a-file/x.json.gz
	expect_error 'a-file' -a -d 1 -o "$OUT"
	;;
freq_zero)
	expect_error 'freq|-F|hz|rate' -a -F 0 -d 1 -o "$OUT"
	;;
freq_too_high)
	expect_error 'freq|-F|hz|rate' -a -F 10000000 -d 1 -o "$OUT"
	;;
bad_duration)
	expect_error 'duration|-d|second' -a -d soon -o "$OUT"
	;;
bad_sched_min)
	expect_error 'sched-min|duration|1ms' -a --sched-min soon -d 1 -o "$OUT"
	;;
sched_min_no_unit_junk)
	expect_error 'sched-min|duration|1ms' -a --sched-min 5min -d 1 -o "$OUT"
	;;
unknown_option)
	expect_error 'no-such-option|unknown|unrecognized|invalid option' --no-such-option -d 1 -o "$OUT"
	;;
bad_unwind)
	expect_error '--unwind frames: unknown way to unwind; use cfi, fp or auto' --unwind frames -a -d 1 -o "$OUT"
	;;
bad_unwind_memory)
	# Below the floor, above the cap, and no size at all: one line each.
	expect_error '--unwind-memory 3M: give a size from 4M to 1G, such as 64M' --unwind-memory 3M -a -d 1 -o "$OUT"
	expect_error '--unwind-memory 2G: give a size from 4M to 1G, such as 64M' --unwind-memory 2G -a -d 1 -o "$OUT"
	expect_error '--unwind-memory lots: give a size from 4M to 1G, such as 64M' --unwind-memory lots -a -d 1 -o "$OUT"
	;;
bad_syscalls)
	expect_error '--syscalls=every: unknown mode; use blocking, all or off' --syscalls=every -a -d 1 -o "$OUT"
	;;
bad_format)
	expect_error '--format json: unknown format; use firefox, pprof or both' --format json -a -d 1 -o "$OUT"
	;;
bad_mode)
	expect_error '--mode 0222: give the profiles' "'"'permissions in octal, readable by their owner' --mode 0222 -a -d 1 -o "$OUT"
	;;
format_both_pb)
	expect_error "--format both: -o $WORK/x.pb.gz is the Firefox profile's name" --format both -o "$WORK/x.pb.gz" -a -d 1
	;;
report_missing_file)
	expect_error "cannot open $WORK/none.json.gz" report "$WORK/none.json.gz"
	;;
report_not_a_profile)
	echo '{"hello": 1}' >"$WORK/hello.json"
	expect_error "is not a processed profile" report "$WORK/hello.json"
	;;
view_missing_file)
	expect_error "cannot open $WORK/none.json.gz \(No such file or directory\); give a profile bpfprof wrote" view "$WORK/none.json.gz"
	;;
view_not_a_profile)
	echo "hello" >"$WORK/hello.txt"
	expect_error "is neither gzip nor JSON" view "$WORK/hello.txt"
	;;
view_bad_port)
	expect_error '--port 70000: give a port number from 0' view --port 70000 "$WORK/x.json.gz"
	;;
view_bad_profiler_url)
	expect_error "--profiler-url ftp://x: give the front-end's http:// or https:// URL" view --profiler-url ftp://x "$WORK/x.json.gz"
	;;
no_inherit_without_pid)
	expect_error '--no-inherit is for -p PID' -a --no-inherit -d 1 -o "$OUT"
	;;
syscalls_value_without_equals)
	expect_error "option '--syscalls' takes its value after '=' \(--syscalls=all\)" --syscalls all -a -d 1 -o "$OUT"
	;;
bad_debuginfod_timeout)
	expect_error '--debuginfod-timeout 10: give a time such as 10s or 500ms' --debuginfod-timeout 10 -a -d 1 -o "$OUT"
	;;
ambiguous_option)
	# An abbreviation of several options names them all (one of them alone works).
	expect_error "ambiguous.*--sched-min, --syscall-min, --syscalls" -a --s 5 -d 1 -o "$OUT"
	;;
missing_btf)
	export BPFPROF_BTF_PATH=$WORK/no-such-btf
	expect_error 'BTF' -a -d 1 -o "$OUT"
	;;
command_not_found)
	expect_error 'no-such-command' -d 5 -o "$OUT" -- "$WORK/no-such-command"
	;;
# --cgroup (issue 6): paths that are not a cgroup v2 directory, and targets
# it cannot narrow.
cgroup_missing)
	. "$(dirname "$0")/cgroup_common.sh"
	require_cgroup_v2
	expect_error "bpfprof-no-such-cgroup-$$.*no such cgroup" -a --cgroup "$V2/bpfprof-no-such-cgroup-$$" -d 1 -o "$OUT"
	;;
cgroup_missing_relative)
	. "$(dirname "$0")/cgroup_common.sh"
	require_cgroup_v2
	expect_error "bpfprof-no-such-cgroup-$$.*no such cgroup" -a --cgroup "bpfprof-no-such-cgroup-$$" -d 1 -o "$OUT"
	;;
cgroup_empty)
	expect_error 'cgroup.*(needs|empty|missing)' -a --cgroup '' -d 1 -o "$OUT"
	;;
cgroup_not_v2)
	# A directory of another filesystem (tmpfs or the root's).
	expect_error '/tmp.*not a cgroup v2' -a --cgroup /tmp -d 1 -o "$OUT"
	;;
cgroup_v1)
	# A cgroup v1 hierarchy's directory: a cgroup, but not of v2.
	. "$(dirname "$0")/cgroup_common.sh"
	v1=$(cgroup_mounts cgroup | head -n 1)
	if [ -z "$v1" ]; then
		log "SKIP no cgroup v1 hierarchy is mounted on this host"
		exit 77
	fi
	expect_error "$v1.*not a cgroup v2.*v1" -a --cgroup "$v1" -d 1 -o "$OUT"
	;;
cgroup_file)
	# The cgroup.procs file of a real cgroup (the v2 root).
	. "$(dirname "$0")/cgroup_common.sh"
	require_cgroup_v2
	expect_error 'cgroup\.procs.*(file|not a cgroup)' -a --cgroup "$V2/cgroup.procs" -d 1 -o "$OUT"
	;;
cgroup_with_pid)
	expect_error '(cgroup.*-p)|(-p.*cgroup)' -p 1 --cgroup / -d 1 -o "$OUT"
	;;
cgroup_with_command)
	expect_error '(cgroup.*command)|(command.*cgroup)' --cgroup / -d 1 -o "$OUT" -- true
	;;
cgroup_too_many)
	# At most 8; the same cgroup nine times is still nine.
	args=()
	for ((i = 0; i < 9; i++)); do
		args+=(--cgroup /)
	done
	expect_error '(at most|up to|too many|more than) 8|8 cgroups' -a "${args[@]}" -d 1 -o "$OUT"
	;;
continuous_with_duration)
	expect_error '-d.*record' continuous -a -d 5 --out-dir "$WORK/out/snaps"
	;;
continuous_with_command)
	expect_error 'command.*record' continuous -- sleep 1
	;;
continuous_keep_and_max_bytes)
	expect_error 'keep.*max-bytes' continuous -a --keep 3 --max-bytes 1G --out-dir "$WORK/out/snaps"
	;;
continuous_bad_interval)
	expect_error 'interval.*(unit|100ms)' continuous -a --interval 60 --out-dir "$WORK/out/snaps"
	;;
continuous_bad_max_bytes)
	expect_error 'max-bytes.*size' continuous -a --max-bytes 12X --out-dir "$WORK/out/snaps"
	;;
continuous_out_dir_is_file)
	: >"$WORK/file"
	expect_error 'not a directory' continuous -a --out-dir "$WORK/file"
	;;
record_with_interval)
	expect_error 'interval.*continuous' -a --interval 10s -d 1 -o "$OUT"
	;;
record_with_listen)
	expect_error 'listen.*continuous' -a --listen 127.0.0.1:0 -d 1 -o "$OUT"
	;;
listen_bad_address)
	expect_error 'listen.*(address|ADDRESS:PORT)' continuous -a --listen nowhere:6060 --out-dir "$WORK/out/snaps"
	;;
listen_port_in_use)
	# A port another program holds: refused before anything is made or loaded.
	python3 -c 'import socket, sys, time
s = socket.socket(); s.bind(("127.0.0.1", 0)); s.listen()
print(s.getsockname()[1], flush=True); time.sleep(60)' >"$WORK/port" &
	BACKGROUND_PIDS+=($!)
	for ((i = 0; i < 100; i++)); do
		[ -s "$WORK/port" ] && break
		sleep 0.05
	done
	expect_error 'cannot listen on 127.0.0.1 port [0-9]+.*in use' continuous -a \
		--listen "127.0.0.1:$(cat "$WORK/port")" --out-dir "$WORK/out/snaps"
	;;
listen_token_missing)
	expect_error 'listen-token-file.*cannot open' continuous -a --listen 127.0.0.1:0 \
		--listen-token-file "$WORK/no-such-token" --out-dir "$WORK/out/snaps"
	;;
listen_tls_not_pem)
	# Text, but no PEM: as a certificate and as its key.
	head -c 300 /dev/urandom | base64 >"$WORK/token" && chmod 600 "$WORK/token"
	expect_error 'TLS.*(PEM|certificate)' continuous -a --listen 127.0.0.1:0 --listen-token-file "$WORK/token" \
		--listen-tls "$WORK/token,$WORK/token" --out-dir "$WORK/out/snaps"
	;;
label_bad)
	expect_error 'label.*KEY=VALUE' continuous -a --listen 127.0.0.1:0 --label 9lives=x --out-dir "$WORK/out/snaps"
	;;
label_reserved)
	expect_error 'label.*own pid' continuous -a --listen 127.0.0.1:0 --label pid=1 --out-dir "$WORK/out/snaps"
	;;
label_twice)
	expect_error 'label.*twice' continuous -a --listen 127.0.0.1:0 --label env=a --label env=b \
		--out-dir "$WORK/out/snaps"
	;;
label_without_listen)
	expect_error 'label.*--listen' continuous -a --label service_name=x --out-dir "$WORK/out/snaps"
	;;
*)
	log "error_case.sh: unknown case $CASE"
	exit 2
	;;
esac
