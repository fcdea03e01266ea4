#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
#
# continuous --listen as a scrape target (issue 30), with real clients.
#
#   scrapers  `continuous -a --listen 127.0.0.1:0 --interval 4s` with the
#             burner running. Two scrapers at once: curl asks for 10 s, and
#             2 s later `go tool pprof -raw URL?seconds=3` (Debian's
#             golang-go) for 3 s; both windows cross a snapshot's cut. Each
#             answer is a whole window: it passes Google's pprof library
#             (profile.Parse + CheckValid, tests/check/pprofcheck), lasts
#             what was asked, and beta's CPU time in it is what the burner's
#             own clock says beta used in that window (bounded by the truth
#             lines around the request). go tool pprof names the burner's
#             functions and its labels (pid, thread_name, process_name, host,
#             --label service_name); the 10 s window is answered without
#             waiting for the cut after its end (its wait past the end, less
#             bpfprof's own building time, is under the interval). Then: /snapshot/latest loads in the Firefox
#             Profiler's loader; bad seconds are 400, off-CPU without
#             --off-cpu 404, a page of another host 403, and another local
#             user without a token 403.
#   token     a non-loopback --listen without --listen-token-file refuses to
#             start with one line. With a token and TLS (a self-signed
#             certificate) on 0.0.0.0: no token and a wrong one are 401,
#             the right one over HTTPS gets a valid CPU profile, and with
#             --off-cpu /debug/pprof/offcpu a valid off-CPU profile whose
#             stacks end in off-CPU leaves, where the burner's truth thread,
#             asleep but for a moment every 20 ms, is off the CPU for most
#             of the window and no more than all of it, and so is the
#             sleeper's thread whose 1.35 s waits span the window's end.
#   hangup    another local user sends 3,000 requests for 300 s windows,
#             closing each at once (many before accept(), when the kernel
#             names their socket's owner uid 0): none is taken for root's,
#             and root's 1 s scrape is answered 200 (it was 503, 16 windows
#             waiting). Then 16 of root's own clients give up on 300 s
#             windows: each window is cancelled (its connection leaves
#             CLOSE-WAIT) and the next scrape is answered.
#   token_file  the README's token recipe, run 10 times while another local
#             user watches the directory with inotify: the user never opens
#             the file. A 0600 token file the user owns is refused with one
#             line; root's, and the sudo user's (SUDO_UID), are taken.
#   slow_symbols  -a with 256 KiB rings under a wakeup storm, the first
#             snapshot's symbolization held until a scrape whose window
#             ends after that cut is answered: it is, with its whole window,
#             and the rings were drained meanwhile (bpfprof -v counts the
#             drains; the longest gap and any loss are said, not asserted).
#   flood     another local user keeps 3,000 connections to the port open or
#             opening; root's 2 s scrapes are still answered, and valid
#             (root's connection waits in the accept queue behind the user's
#             reconnects; the build's time is the machine's, not asserted).
. "$(dirname "$0")/common.sh"
require_root
make_workdir

MODE=${1:-scrapers}
command -v go >/dev/null || fail "go is not installed (scripts/install-deps.sh --test installs golang-go)"
export GOCACHE=$WORK/gocache GOPATH=$WORK/gopath HOME=${HOME:-$WORK} PPROF_TMPDIR=$WORK/pprof
[ -d /usr/share/gocode/src/github.com/google/pprof/profile ] ||
	fail "Google's pprof library is missing (scripts/install-deps.sh --test installs golang-github-google-pprof-dev)"

# The checker: Google's pprof library, from Debian's package.
log "building tests/check/pprofcheck with Debian's github.com/google/pprof"
GOPATH=/usr/share/gocode GO111MODULE=off go build -o "$WORK/pprofcheck" "$CHECK_DIR/pprofcheck/main.go" \
	>"$WORK/go-build.err" 2>&1 || fail "cannot build pprofcheck: $(cat "$WORK/go-build.err")"

# start_listening ARGS...: `bpfprof continuous ARGS` in the background until it
# serves and records; sets BPFPROF_PID and PORT.
start_listening() {
	local i
	log "\$ bpfprof continuous $* &"
	: >"$WORK/bpfprof.err"
	env --default-signal=INT,TERM "$BPFPROF" continuous "$@" >"$WORK/bpfprof.out" 2>"$WORK/bpfprof.err" &
	BPFPROF_PID=$!
	BACKGROUND_PIDS+=("$BPFPROF_PID")
	wait_recording "$BPFPROF_PID"
	PORT=$(sed -n 's|^bpfprof: serving scrapes at https\{0,1\}://[^ ]*:\([0-9]*\)/debug/pprof/profile.*|\1|p' "$WORK/bpfprof.err")
	[ -n "$PORT" ] || fail "bpfprof did not say where it serves: $(cat "$WORK/bpfprof.err")"
	log "serving on port $PORT"
}

stop_listening() {
	kill -TERM "$BPFPROF_PID" 2>/dev/null
	wait "$BPFPROF_PID"
	local status=$?
	[ "$status" -eq 0 ] || fail "bpfprof continuous exited with status $status: $(tail -n 5 "$WORK/bpfprof.err")"
}

# truth: the burner's last truth line, "MONO_NS BETA_NS".
truth() {
	grep '^burner: truth' "$WORK/burner.out" | tail -n 1 |
		awk '{ for (i = 3; i < NF; i += 2) v[$i] = $(i + 1); print v["mono_ns"], v["beta"] }'
}

# pprofcheck NAME FILE: FILE passes profile.Parse + CheckValid; its summary goes to $WORK/NAME.json.
pprofcheck() {
	"$WORK/pprofcheck" "$2" >"$WORK/$1.json" 2>"$WORK/$1.err" ||
		fail "$1: Google's pprof library refuses it: $(cat "$WORK/$1.err")"
	ok "$1: profile.Parse and CheckValid accept it"
}

# check_window NAME SECONDS BEFORE AFTER: the window lasts SECONDS and beta's
# CPU time in it (the burner's own beta, by its pid: another burner on the
# machine has a beta too) fits what beta used between the truth lines BEFORE and AFTER
# ("MONO BETA"), which enclose it: at most all of it, at least all of it but
# what beta could have run outside the window.
check_window() {
	"$NODE" -e '
		const [file, secs, before, after, pid] = process.argv.slice(1);
		const s = JSON.parse(require("fs").readFileSync(file));
		const [m0, b0] = before.split(" ").map(Number), [m1, b1] = after.split(" ").map(Number);
		const got = (s.byPidThread[`${pid}/beta`] || [0, 0])[1];
		const used = b1 - b0, outside = (m1 - m0) - secs * 1e9;
		const slack = 30e6 + 0.02 * used;
		const msg = `beta ran ${(got / 1e6).toFixed(1)} ms in the window; the burner says ` +
			`${(used / 1e6).toFixed(1)} ms over ${((m1 - m0) / 1e6).toFixed(0)} ms around it`;
		if (s.durationNs !== secs * 1e9) { console.log(`lasts ${s.durationNs} ns, not ${secs} s`); process.exit(1); }
		if (got > used + slack || got < used - outside - slack) { console.log(msg); process.exit(1); }
		console.log(msg);' "$WORK/$1.json" "$2" "$3" "$4" "$BURNER_PID" >"$WORK/$1.window" ||
		fail "$1: not the whole window: $(cat "$WORK/$1.window")"
	ok "$1: a whole ${2} s window: $(cat "$WORK/$1.window")"
}

case $MODE in
scrapers)
	start_burner 90
	start_listening -a --listen 127.0.0.1:0 --interval 4s --out-dir "$WORK/snaps" \
		--label service_name=scrape-test -v

	before_a=$(truth)
	curl -sS -o "$WORK/a.pb.gz" -w '%{http_code} %{time_total}\n' \
		"http://127.0.0.1:$PORT/debug/pprof/profile?seconds=10" >"$WORK/a.curl" 2>&1 &
	curl_a=$!
	sleep 2
	before_b=$(truth)
	log "\$ go tool pprof -raw http://127.0.0.1:$PORT/debug/pprof/profile?seconds=3"
	# -timeout: go tool pprof's own is 1.5 times the window, which a cut's
	# cold symbolization on the poll thread can exceed; the test bounds hangs only.
	go tool pprof -timeout 60 -raw "http://127.0.0.1:$PORT/debug/pprof/profile?seconds=3" >"$WORK/b.raw" 2>"$WORK/b.err" ||
		fail "go tool pprof could not fetch or read the profile: $(cat "$WORK/b.err")"
	after_b=$(truth)
	wait "$curl_a"
	after_a=$(truth)
	read -r code_a time_a <"$WORK/a.curl"
	[ "$code_a" = 200 ] || fail "the 10 s scrape was answered $(cat "$WORK/a.curl")"
	awk -v t="$time_a" 'BEGIN { exit !(t >= 10) }' ||
		fail "the 10 s window was answered after ${time_a} s, before its end"
	# Not held for the next cut: what the answer waited past its window's end,
	# less bpfprof's own work on the poll thread before it (the profile's
	# building, and each cut's and the other scrape's symbolization: cold or
	# under ASan, that is seconds), is under the 4 s interval. A margin in
	# seconds would time the machine instead.
	read -r late build busy < <(awk '
		/symbolized .* frames .* in [0-9]+ ms/ { for (i = 1; i < NF; i++) if ($i == "in" && $(i + 2) ~ /^ms/) busy += $(i + 1) }
		/scrape of 10 s answered/ { for (i = 1; i < NF; i++) { if ($i == "answered") late = $(i + 1); if ($(i + 1) == "ms" && $(i + 2) == "of") build = $i }
			print late, build, busy; exit }' "$WORK/bpfprof.err")
	[ -n "$late" ] || fail "bpfprof -v did not say when it answered the 10 s scrape"
	[ $((late - build - busy)) -lt 4000 ] ||
		fail "the 10 s window waited $((late - build - busy)) ms past its end besides bpfprof's $build ms of building it and $busy ms of symbolizing: held for a later cut"
	ok "the 10 s window was answered ${time_a} s after the request, ${late} ms after its end (${build} ms building it, ${busy} ms symbolizing before)"

	# go tool pprof saved what it fetched: check it as the library reads it.
	b_file=$(ls "$WORK"/pprof/*.pb.gz 2>/dev/null | head -n 1)
	[ -n "$b_file" ] || fail "go tool pprof kept no copy in $WORK/pprof"
	pprofcheck a "$WORK/a.pb.gz"
	pprofcheck b "$b_file"
	check_window a 10 "$before_a" "$after_a"
	check_window b 3 "$before_b" "$after_b"
	head -n 12 "$WORK/b.raw" | indent
	for fn in alpha_heavy alpha_light beta_spin; do
		grep -q "^ *0x[0-9a-f]*: $fn " "$WORK/b.raw" || grep -q " $fn$\| $fn " "$WORK/b.raw" ||
			fail "go tool pprof -raw names no $fn"
	done
	ok "go tool pprof -raw names alpha_heavy, alpha_light and beta_spin"
	for want in "pid:\[$BURNER_PID\]" "thread_name:\[beta\]" "thread_name:\[alpha\]" \
		"process_name:\[bpfprof-burner\]" "host:\[$(hostname)\]" "service_name:\[scrape-test\]"; do
		grep -q "$want" "$WORK/b.raw" || fail "go tool pprof -raw shows no label $want"
	done
	ok "labels: pid, thread_name, process_name, host and service_name"
	"$NODE" -e 'const s = JSON.parse(require("fs").readFileSync(process.argv[1]));
		process.exit(s.sampleTypes.join() === "samples/count,cpu/nanoseconds" && s.unlabelled === 0 ? 0 : 1)' \
		"$WORK/a.json" || fail "sample types $(cat "$WORK/a.json" | head -c 200), or unlabelled samples"
	ok "sample types samples/count and cpu/nanoseconds, as Go's; every sample labelled"

	code=$(curl -sS -o "$WORK/latest.json.gz" -w '%{http_code}' "http://127.0.0.1:$PORT/snapshot/latest")
	[ "$code" = 200 ] || fail "/snapshot/latest answered $code"
	# It is the newest snapshot written: the same bytes as one in --out-dir, checked under its name.
	same=
	for f in "$WORK"/snaps/*.json.gz; do
		cmp -s "$f" "$WORK/latest.json.gz" && same=$f
	done
	[ -n "$same" ] || fail "/snapshot/latest is none of the snapshots in $WORK/snaps"
	mkdir -p "$WORK/latest" && cp "$same" "$WORK/latest/"
	node_check continuous.mjs --dir "$WORK/latest" --count 1 --pid "$BURNER_PID" \
		--truth "$WORK/burner.out" >"$WORK/latest.check" 2>&1 ||
		fail "/snapshot/latest ($(basename "$same")) does not pass the snapshot checks: $(tail -n 5 "$WORK/latest.check")"
	ok "/snapshot/latest loads in the Firefox Profiler's loader"

	expect_code() { # URL CODE WHAT [CURL ARGS...]
		local url=$1 want=$2 what=$3 got
		shift 3
		got=$(curl -sS -o "$WORK/answer.txt" -w '%{http_code}' "$@" "$url")
		[ "$got" = "$want" ] || fail "$what: answered $got, not $want: $(cat "$WORK/answer.txt")"
		ok "$what: $got $(head -n 1 "$WORK/answer.txt" | cut -c1-100)"
	}
	expect_code "http://127.0.0.1:$PORT/debug/pprof/profile?seconds=301" 400 "seconds=301"
	expect_code "http://127.0.0.1:$PORT/debug/pprof/profile?seconds=x" 400 "seconds=x"
	expect_code "http://127.0.0.1:$PORT/debug/pprof/offcpu?seconds=1" 404 "offcpu without --off-cpu"
	expect_code "http://127.0.0.1:$PORT/" 403 "a page of another host (DNS rebinding)" -H "Host: evil.example"
	expect_code "http://127.0.0.1:$PORT/debug/pprof/profile" 405 "POST" -X POST
	code=$(setpriv --reuid=65534 --regid=65534 --clear-groups curl -sS -o "$WORK/nobody.txt" -w '%{http_code}' \
		"http://127.0.0.1:$PORT/debug/pprof/profile?seconds=1")
	[ "$code" = 403 ] || fail "another local user without a token was answered $code"
	ok "another local user without a token: 403 $(cat "$WORK/nobody.txt")"
	stop_listening
	;;
token)
	run_bpfprof 30 continuous -a --listen 0.0.0.0:0 --out-dir "$WORK/snaps"
	[ "$STATUS" -eq 2 ] || fail "--listen 0.0.0.0:0 without a token exited $STATUS, not 2"
	[ "$(wc -l <"$WORK/bpfprof.err")" -eq 1 ] && grep -q -- "--listen-token-file" "$WORK/bpfprof.err" ||
		fail "not one line naming --listen-token-file: $(cat "$WORK/bpfprof.err")"
	ok "a non-loopback --listen without a token refuses to start: $(cat "$WORK/bpfprof.err")"
	[ ! -e "$WORK/snaps" ] || fail "it created $WORK/snaps before refusing"

	head -c 24 /dev/urandom | base64 >"$WORK/token" && chmod 600 "$WORK/token"
	openssl req -x509 -newkey rsa:2048 -nodes -days 1 -subj /CN=127.0.0.1 \
		-addext subjectAltName=IP:127.0.0.1 -keyout "$WORK/key.pem" -out "$WORK/cert.pem" \
		>"$WORK/openssl.err" 2>&1 || fail "openssl: $(cat "$WORK/openssl.err")"
	start_burner 60
	# sleeper90: each 1.5 s it runs 150 ms, then sleeps in one place: a wait is
	# nearly always going on when a window ends, and it must count up to the end.
	"$SLEEPER" 60 1500 >"$WORK/sleeper.out" 2>"$WORK/sleeper.err" &
	SLEEPER_PID=$!
	BACKGROUND_PIDS+=("$SLEEPER_PID")
	start_listening -a --off-cpu --listen 0.0.0.0:0 --listen-token-file "$WORK/token" \
		--listen-tls "$WORK/cert.pem,$WORK/key.pem" --out-dir "$WORK/snaps"
	url="https://127.0.0.1:$PORT/debug/pprof/profile?seconds=2"
	code=$(curl -sS --cacert "$WORK/cert.pem" -o "$WORK/answer.txt" -w '%{http_code}' "$url")
	[ "$code" = 401 ] || fail "no token: answered $code"
	ok "no token: 401 $(cat "$WORK/answer.txt")"
	code=$(curl -sS --cacert "$WORK/cert.pem" -o "$WORK/answer.txt" -w '%{http_code}' \
		-H "Authorization: Bearer wrong$(cat "$WORK/token")" "$url")
	[ "$code" = 401 ] || fail "a wrong token: answered $code"
	ok "a wrong token: 401"
	code=$(curl -sS -o /dev/null -w '%{http_code}' "http://127.0.0.1:$PORT/" 2>/dev/null)
	[ "$code" != 200 ] || fail "plain HTTP was answered on the TLS port"
	ok "plain HTTP gets no answer on the TLS port"
	code=$(curl -sS --cacert "$WORK/cert.pem" -o "$WORK/cpu.pb.gz" -w '%{http_code}' \
		-H "Authorization: Bearer $(cat "$WORK/token")" "$url")
	[ "$code" = 200 ] || fail "the right token over HTTPS: answered $code"
	pprofcheck cpu "$WORK/cpu.pb.gz"
	code=$(curl -sS --cacert "$WORK/cert.pem" -o "$WORK/off.pb.gz" -w '%{http_code}' \
		-H "Authorization: Bearer $(cat "$WORK/token")" "https://127.0.0.1:$PORT/debug/pprof/offcpu?seconds=2")
	[ "$code" = 200 ] || fail "/debug/pprof/offcpu with the token: answered $code"
	pprofcheck off "$WORK/off.pb.gz"
	"$NODE" -e 'const s = JSON.parse(require("fs").readFileSync(process.argv[1]));
		const leaves = Object.keys(s.byLeaf);
		const bad = leaves.filter((l) => !l.startsWith("off-CPU: "));
		const truth = (s.byPidThread[`${process.argv[2]}/burner-truth`] || [0])[0];
		console.log(`${leaves.length} leaves; burner-truth (asleep but for ~0.1 ms each 20 ms) ` +
			`off the CPU for ${(truth / 1e6).toFixed(0)} ms of the 2000 ms window`);
		process.exit(s.sampleTypes.join() === "off_cpu/nanoseconds" && !bad.length &&
			truth >= 1e9 && truth <= 2e9 + 2 * s.period ? 0 : 1)' \
		"$WORK/off.json" "$BURNER_PID" >"$WORK/off.summary" || fail "the off-CPU profile: $(cat "$WORK/off.summary") $(head -c 300 "$WORK/off.json")"
	ok "the off-CPU profile: off_cpu/nanoseconds, every stack an off-CPU leaf: $(cat "$WORK/off.summary")"
	"$NODE" -e 'const s = JSON.parse(require("fs").readFileSync(process.argv[1]));
		const off = (s.byPidThread[`${process.argv[2]}/sleeper90`] || [0])[0];
		console.log(`sleeper90 (asleep 90 % of each 1.5 s, in waits of 1.35 s) off the CPU for ${(off / 1e6).toFixed(0)} ms of 2000`);
		process.exit(off >= 0.75 * 2e9 && off <= 2e9 + 2 * s.period ? 0 : 1)' "$WORK/off.json" "$SLEEPER_PID" >"$WORK/sleeper.summary" ||
		fail "waits going on at the window's end are not counted up to it: $(cat "$WORK/sleeper.summary")"
	ok "$(cat "$WORK/sleeper.summary")"
	stop_listening
	;;
flood)
	start_burner 60
	# A bare port: 127.0.0.1.
	start_listening -a --listen 0 --out-dir "$WORK/snaps"
	grep -q '^bpfprof: serving scrapes at http://127\.0\.0\.1:' "$WORK/bpfprof.err" ||
		fail "--listen PORT does not serve on 127.0.0.1: $(grep serving "$WORK/bpfprof.err")"
	# Another local user holds 3,000 connections, each opened again as soon as it closes.
	HOLD_DIR=$(mktemp -d /tmp/bpfprof-scrape-flood.XXXXXX) && chmod 755 "$HOLD_DIR" ||
		fail "cannot make a directory for the user's script"
	hold_connections "$HOLD_DIR" "$PORT" 3000 setpriv --reuid=65534 --regid=65534 --clear-groups
	for ((k = 0; k < 3; k++)); do
		got=$(curl -sS -o "$WORK/flood.pb.gz" -w '%{http_code} %{time_total}' --max-time 20 \
			"http://127.0.0.1:$PORT/debug/pprof/profile?seconds=2")
		log "root's 2 s scrape $((k + 1)): $got; the user: $(tail -n 1 "$WORK/hold.out")"
		# Answered at all is the property: a server the user's connections
		# fill refuses root (503) or never answers (curl gives up at 20 s, a
		# hang's bound). How long the profile takes to build is the machine's.
		[ "${got% *}" = 200 ] || fail "root's scrape $((k + 1)) got '$got' while the user floods the port"
		pprofcheck "flood$k" "$WORK/flood.pb.gz"
	done
	ok "3 of 3 of root's 2 s scrapes answered while another user keeps 3000 connections open or opening ($(tail -n 1 "$WORK/hold.out"))"
	kill -KILL "$HOLD_PID"
	rm -rf "$HOLD_DIR"
	stop_listening
	;;
hangup)
	. "$(dirname "$0")/hostile_common.sh"
	[ -x /usr/bin/python3 ] || fail "/usr/bin/python3 is not installed (scripts/install-deps.sh --test installs it)"
	make_hostile_user
	start_listening -a --listen 127.0.0.1:0 --out-dir "$WORK/snaps"
	url="http://127.0.0.1:$PORT/debug/pprof/profile"
	# close_waits: the server's connections whose client has gone.
	close_waits() {
		ss -Htn state close-wait "( sport = :$PORT )" | wc -l
	}
	# root_scrape WHAT: root's 1 s scrape is answered 200 and valid.
	root_scrape() {
		local got
		got=$(curl -sS -o "$WORK/root.pb.gz" -w '%{http_code}' --max-time 30 "$url?seconds=1")
		[ "$got" = 200 ] || fail "$1: root's 1 s scrape was answered $got: $(head -c 200 "$WORK/root.pb.gz")"
		pprofcheck root "$WORK/root.pb.gz"
		ok "$1: root's 1 s scrape answered 200"
	}
	root_scrape "control, before the user"
	# The user's 3,000 requests for 300 s windows, each closed at once: one
	# that closed before accept() used to be taken for root's and kept its
	# window, and 16 such windows made every later scrape 503.
	cp "$(dirname "$0")/hangup_requests.py" "$USER_DIR/hangup.py" && chmod 644 "$USER_DIR/hangup.py" ||
		fail "cannot copy hangup_requests.py"
	pids=()
	for ((k = 0; k < 4; k++)); do
		"${as_user[@]}" /usr/bin/python3 "$USER_DIR/hangup.py" "$PORT" 750 "/debug/pprof/profile?seconds=300" \
			>"$WORK/hangup$k.out" 2>&1 &
		pids+=($!)
	done
	for ((k = 0; k < 4; k++)); do
		wait "${pids[k]}" || fail "the user's script failed: $(tail -n 3 "$WORK/hangup$k.out")"
	done
	log "the user: $(cat "$WORK"/hangup?.out | tr '\n' ' '); connections in CLOSE-WAIT: $(close_waits)"
	root_scrape "after the user's 3000 hung-up requests for 300 s windows"
	# Root's own clients that give up: 16 windows whose curl exits after
	# 1 s. Each is cancelled once its client has gone, so its connection
	# leaves CLOSE-WAIT (the limit only catches a hang: a kept window holds
	# it 300 s) and a new scrape finds room.
	pids=()
	for ((k = 0; k < 16; k++)); do
		curl -s -o /dev/null --max-time 1 "$url?seconds=300" &
		pids+=($!)
	done
	wait "${pids[@]}"
	for ((k = 0; k < 200 && $(close_waits) > 0; k++)); do
		sleep 0.1
	done
	[ "$(close_waits)" -eq 0 ] ||
		fail "16 windows whose clients hung up still hold $(close_waits) connections in CLOSE-WAIT after 20 s"
	ok "16 windows whose clients hung up were cancelled (no connection left in CLOSE-WAIT)"
	root_scrape "after 16 of root's clients hung up on their 300 s windows"
	stop_listening
	;;
token_file)
	. "$(dirname "$0")/hostile_common.sh"
	[ -x /usr/bin/python3 ] || fail "/usr/bin/python3 is not installed (scripts/install-deps.sh --test installs it)"
	make_hostile_user
	# The README's token recipe: the lines before the command that reads the token.
	recipe=$(awk '/^```sh$/ { inb = 1; blk = ""; next }
		inb && /^```$/ { inb = 0; next }
		inb && /bpfprof continuous .*--listen-token-file/ { print blk; exit }
		inb { blk = blk $0 "\n" }' "$(dirname "$0")/../../README.md")
	grep -q listen.token <<<"$recipe" || fail "no token recipe found in README.md"
	# Run as it is (root) in a root-owned directory the user can list, like /etc.
	dir=$(mktemp -d /var/tmp/bpfprof-token.XXXXXX) && chmod 755 "$dir" || fail "mktemp -d failed"
	HOSTILE_CLEANUP+=("rm -rf '$dir'")
	recipe=${recipe//sudo /}
	recipe=${recipe//\/etc\/bpfprof/$dir}
	log "the README's recipe, in $dir:"
	printf '%s\n' "$recipe" | indent
	cp "$(dirname "$0")/open_when_created.py" "$USER_DIR/watch.py" && chmod 644 "$USER_DIR/watch.py" ||
		fail "cannot copy open_when_created.py"
	# The user watches the directory and opens the file as it is created, 10 times over.
	for ((k = 0; k < 10; k++)); do
		rm -f "$dir/listen.token"
		"${as_user[@]}" /usr/bin/python3 "$USER_DIR/watch.py" "$dir" listen.token >"$WORK/watch$k.out" 2>&1 &
		watcher=$!
		for ((t = 0; t < 600; t++)); do
			[ -s "$WORK/watch$k.out" ] && break
			sleep 0.05
		done
		grep -q '^watching' "$WORK/watch$k.out" || fail "the user's watcher did not start: $(cat "$WORK/watch$k.out")"
		bash -e -c "$recipe" || fail "the README's recipe failed"
		[ "$(stat -c %a "$dir/listen.token")" = 600 ] && [ -s "$dir/listen.token" ] ||
			fail "the recipe left $(stat -c '%a %s bytes' "$dir/listen.token")"
		# The watcher has had its chance once it says it tried the open
		# (however late a busy machine lets it run); the bound only catches a hang.
		for ((t = 0; t < 600; t++)); do
			grep -q '^opened\|^cannot open' "$WORK/watch$k.out" && break
			sleep 0.05
		done
		grep -q '^opened\|^cannot open' "$WORK/watch$k.out" ||
			fail "run $((k + 1)): the user's watcher never tried to open the file: $(cat "$WORK/watch$k.out")"
		kill "$watcher" 2>/dev/null
		wait "$watcher" 2>/dev/null
		grep -q '^opened' "$WORK/watch$k.out" &&
			fail "run $((k + 1)): the user opened the token file the recipe was writing: $(tail -n 1 "$WORK/watch$k.out")"
	done
	ok "10 runs of the README's token recipe: the user's inotify watcher never opened the file"

	# A 0600 token file the user owns: the user knows the token.
	head -c 24 /dev/urandom | base64 >"$USER_DIR/token"
	chown "$USER_NAME:" "$USER_DIR/token" && chmod 600 "$USER_DIR/token"
	# Refused before anything is loaded; else it serves until killed.
	log "\$ bpfprof continuous -a --listen 127.0.0.1:0 --listen-token-file $USER_DIR/token (uid $USER_UID's)"
	timeout --kill-after=5 20 env --default-signal=INT,TERM "$BPFPROF" continuous -a --listen 127.0.0.1:0 \
		--listen-token-file "$USER_DIR/token" --out-dir "$WORK/snaps" >"$WORK/bpfprof.out" 2>"$WORK/bpfprof.err"
	STATUS=$?
	[ "$STATUS" -ne 124 ] && [ "$STATUS" -ne 0 ] ||
		fail "bpfprof took a token file that uid $USER_UID owns: $(head -n 3 "$WORK/bpfprof.err")"
	[ "$(wc -l <"$WORK/bpfprof.err")" -eq 1 ] && grep -q "owned by uid $USER_UID" "$WORK/bpfprof.err" ||
		fail "not one line saying who owns it: $(cat "$WORK/bpfprof.err")"
	ok "a token file another user owns: exit $STATUS, $(cat "$WORK/bpfprof.err")"
	# Controls: the same file as root's, and as the user's who ran sudo.
	chown root: "$USER_DIR/token"
	start_listening -a --listen 127.0.0.1:0 --listen-token-file "$USER_DIR/token" --out-dir "$WORK/snaps"
	stop_listening
	ok "the same file, root's: taken"
	chown "$USER_NAME:" "$USER_DIR/token"
	SUDO_UID=$USER_UID SUDO_GID=$USER_GID start_listening -a --listen 127.0.0.1:0 \
		--listen-token-file "$USER_DIR/token" --out-dir "$WORK/snaps"
	stop_listening
	ok "the same file, owned by the user who ran sudo (SUDO_UID): taken"
	;;
slow_symbols)
	# -a --interval 2s --ring-size 256K while two threads wake each other
	# ~20k times a second, and the first snapshot's symbolization held (as
	# cold caches of big binaries hold it) until the test opens
	# BPFPROF_TEST_SYMBOLIZE_GATE, after a scrape asked once that window was
	# cut has been answered: the scrape's window ends after the cut, so it
	# is answered only if the rings are drained past its end while the
	# symbolization is held (when the thread draining the rings symbolized
	# the windows itself, it never was). The longest gap between drains,
	# records lost and cuts that waited depend on the machine's load too:
	# they are said, not asserted.
	: "${PINGPONG:?PINGPONG is not set}"
	start_background pingpong "$PINGPONG" -s 60
	start_burner 60
	sleep 0.3
	gate=$WORK/symbolize.gate
	export BPFPROF_TEST_SYMBOLIZE_GATE=$gate
	start_listening -a --listen 127.0.0.1:0 --interval 2s --ring-size 256K \
		--out-dir "$WORK/snaps" -v
	unset BPFPROF_TEST_SYMBOLIZE_GATE
	wait_grep '^bpfprof: debug: window cut at' "$WORK/bpfprof.err" "bpfprof cut no window in 60 s"
	before=$(truth)
	# 60 s bounds a hang only: unanswered, the scrape would wait for the gate forever.
	got=$(curl -sS -o "$WORK/s.pb.gz" -w '%{http_code}' --max-time 60 \
		"http://127.0.0.1:$PORT/debug/pprof/profile?seconds=2")
	after=$(truth)
	: >"$gate"
	[ "$got" = 200 ] ||
		fail "a 2 s scrape ending while the first window's symbolization was held was answered '$got' (not at all: the rings were not drained meanwhile?)"
	ok "a 2 s scrape ending after the first cut was answered while that window's symbolization was held"
	wait_grep "the test's gate held" "$WORK/bpfprof.err" "the gate did not let the symbolization go"
	for ((i = 0; i < 1200; i++)); do
		[ "$(grep -c '^bpfprof: snapshot .* written' "$WORK/bpfprof.err")" -ge 4 ] && break
		kill -0 "$BPFPROF_PID" 2>/dev/null || fail "bpfprof exited: $(tail -n 5 "$WORK/bpfprof.err")"
		sleep 0.05
	done
	stop_listening
	grep -E "gate held|symbolized|drained at most|scrape of|lost|more slowly" "$WORK/bpfprof.err" | head -n 30 | indent
	pprofcheck s "$WORK/s.pb.gz"
	check_window s 2 "$before" "$after"
	drains=$(sed -n "s/.*the test's gate held .* the rings were drained \([0-9]*\) times meanwhile.*/\1/p" "$WORK/bpfprof.err")
	[ -n "$drains" ] && [ "$drains" -ge 1 ] ||
		fail "the rings were drained ${drains:-?} times while the symbolization was held"
	ok "the rings were drained $drains times while the symbolization was held"
	# Observations, not properties: a busy machine may hold the reader off anyway.
	log "the longest gaps between drains: $(sed -n 's/.*the rings were drained at most \([0-9]*\) ms apart.*/\1/p' "$WORK/bpfprof.err" | sort -n | tail -n 1) ms;" \
		"records lost: $(grep -c 'lost because a ring buffer was full' "$WORK/bpfprof.err") lines;" \
		"cuts that waited for the symbolizer: $(grep -c 'written more slowly than they are cut' "$WORK/bpfprof.err")"
	node_check continuous.mjs --dir "$WORK/snaps" --min-count 4 --interval 2000 >"$WORK/snaps.check" 2>&1 ||
		fail "the snapshots do not pass the snapshot checks: $(tail -n 5 "$WORK/snaps.check")"
	ok "the snapshots touch and load"
	;;
*)
	fail "unknown mode $MODE"
	;;
esac
