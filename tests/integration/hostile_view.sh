#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
#
# What a local user can do to `bpfprof view` (issue 27), each attack run by
# a throw-away unprivileged user made for the test and removed after it:
#
#   cmdline  an admin (a second throw-away account, not root, with a
#            display) runs view, which opens the link in the browser (a
#            script that records its argv and stays): the link's secret
#            must be in no /proc/PID/cmdline or environ the user can read.
#            The browser gets a file:// page, 0600 in a 0700 directory of
#            the admin's, that leads to the link; removed when view ends.
#   browser  the same with headless Chromium as the browser and a front-end
#            of our own (--profiler-url): the page leads it to the link,
#            and the front-end's page fetches the profile and asks
#            /source/v1 (a JSON POST, preflighted) through CORS.
#   source   the user's binary (-g, #line) names as its source files a
#            0600 file of root's, a 0644 file in root's 0700 directory, a
#            symlink to that file and a path through a symlink to that
#            directory; a root view of its profile refuses all four and
#            still serves the world-readable source file it also names.
#   source_viewer  the user's binary names as its source file the admin's
#            0600 key in the admin's 0700 directory: the admin's own view of
#            root's profile refuses it (issue 37), and still serves the
#            admin's 0600 file that the admin's own program names, and the
#            world-readable file the user's names.
#   cors     only the front-end's origin gets Access-Control-Allow-Origin.
#   host     a request naming another Host (DNS rebinding) is refused.
#   idle     the user holds 3,000 idle connections to view's port (and
#            opens another each time one closes): the admin's requests
#            still get their answers within seconds.
#
# Usage: hostile_view.sh MODE
. "$(dirname "$0")/common.sh"
require_root
make_workdir

MODE=${1:?usage: hostile_view.sh cmdline|browser|source|source_viewer|cors|host|idle}
. "$(dirname "$0")/hostile_common.sh"
make_hostile_user
VIEW_PID=
ADMIN_NAME=
ADMIN_DIR=
SECRET_DIR=

cleanup_view() {
	[ -n "$VIEW_PID" ] && kill -KILL "$VIEW_PID" 2>/dev/null
	if [ -n "$ADMIN_NAME" ]; then
		pkill -KILL -u "$ADMIN_NAME" 2>/dev/null
		sleep 0.1
		userdel "$ADMIN_NAME" 2>/dev/null
	fi
	[ -n "$ADMIN_DIR" ] && rm -rf "$ADMIN_DIR"
	[ -n "$SECRET_DIR" ] && rm -rf "$SECRET_DIR"
}
HOSTILE_CLEANUP+=(cleanup_view)

# start_view PROFILE [ARGS...]: `bpfprof view PROFILE --no-open` as root
# (not as anyone's sudo), until it serves; sets VIEW_PID, URL, PORT, SECRET.
start_view() {
	local file=$1
	shift
	: >"$WORK/view.err"
	env -u SUDO_UID -u SUDO_GID -u SUDO_USER --default-signal=INT,TERM \
		"$BPFPROF" view "$file" --no-open "$@" >"$WORK/view.out" 2>"$WORK/view.err" &
	VIEW_PID=$!
	wait_serving
}

wait_serving() {
	wait_view_serving "$VIEW_PID"
	PORT=$(sed -n 's|^http://127\.0\.0\.1:\([0-9]*\)/.*|\1|p' <<<"$URL")
	SECRET=$(sed -n 's|^http://[^/]*/\([0-9a-f]\{32\}\)/.*|\1|p' <<<"$URL")
	[[ $PORT =~ ^[0-9]+$ ]] && [ -n "$SECRET" ] || fail "bpfprof view printed no http://127.0.0.1:PORT/SECRET/... URL: $(cat "$WORK/view.err")"
	log "serving at $URL"
}

stop_view() {
	kill -INT "$VIEW_PID"
	wait "$VIEW_PID" || fail "bpfprof view exited non-zero after SIGINT"
	VIEW_PID=
}

# source_of FILE: /source/v1's answer for FILE.
source_of() {
	curl -s --max-time 10 -X POST --data-binary "{\"debugName\":\"app\",\"debugId\":\"0\",\"file\":\"$1\"}" "${URL%/*}/source/v1"
}

# A profile of root's to serve.
small_profile() {
	run_bpfprof 60 -o "$WORK/p.json.gz" -- sleep 0.3
	expect_success
}

# make_admin: a second throw-away account, the admin who runs view (not
# root: view opens no browser as root), its 0700 directory ADMIN_DIR with a
# copy of a profile.
make_admin() {
	small_profile
	ADMIN_NAME=bpfa$$
	useradd --system --no-create-home --shell /usr/sbin/nologin "$ADMIN_NAME" ||
		fail "cannot create the throw-away admin $ADMIN_NAME"
	ADMIN_DIR=$(mktemp -d /var/tmp/bpfprof-admin.XXXXXX) || fail "mktemp -d failed"
	cp "$WORK/p.json.gz" "$ADMIN_DIR/p.json.gz"
	# The build tree may be in a 0700 directory (a clone in /root): the admin runs a copy.
	install -m 0755 "$BPFPROF" "$ADMIN_DIR/bpfprof" || fail "cannot copy bpfprof for the admin"
}

# start_admin_view [ARGS...]: the admin's `bpfprof view ARGS`, with a
# display and $BROWSER the script $ADMIN_DIR/browser.
start_admin_view() {
	chmod 0755 "$ADMIN_DIR/browser"
	chown -R "$ADMIN_NAME:" "$ADMIN_DIR"
	chmod 0700 "$ADMIN_DIR"
	log "throw-away admin $ADMIN_NAME runs bpfprof view with a display and \$BROWSER"
	: >"$WORK/view.err"
	setpriv --reuid "$ADMIN_NAME" --regid "$ADMIN_NAME" --clear-groups \
		env -i PATH=/usr/bin:/bin HOME="$ADMIN_DIR" DISPLAY=:99 BROWSER="$ADMIN_DIR/browser" \
		"$ADMIN_DIR/bpfprof" view "$ADMIN_DIR/p.json.gz" "$@" >"$WORK/view.out" 2>"$WORK/view.err" &
	VIEW_PID=$!
	wait_serving
}

case "$MODE" in
cmdline)
	make_admin
	# The browser: records its arguments and the page it was given, and stays, as a browser does.
	cat >"$ADMIN_DIR/browser" <<EOF
#!/bin/sh
printf '%s\n' "\$@" >"$ADMIN_DIR/browser.args"
page=\${1#file://}
cat "\$page" >"$ADMIN_DIR/browser.page" 2>&1
stat -c '%a %U' "\$page" "\${page%/*}" >"$ADMIN_DIR/browser.stat" 2>&1
sleep 120
EOF
	start_admin_view
	for ((i = 0; i < 200; i++)); do
		[ -s "$ADMIN_DIR/browser.stat" ] && break
		sleep 0.05
	done
	[ -s "$ADMIN_DIR/browser.args" ] || fail "the browser was not started: $(cat "$WORK/view.err")"
	LINK=$(head -n 1 "$WORK/view.out")
	[[ $LINK == *"$SECRET"* ]] || fail "the link printed is '$LINK', without the secret"
	# Everything the user can read of every process.
	"${as_user[@]}" bash -c 'for f in /proc/[0-9]*/cmdline /proc/[0-9]*/environ; do
		tr "\0" " " <"$f" 2>/dev/null && echo " $f"; done' >"$WORK/proc.txt"
	log "the user read $(grep -c . "$WORK/proc.txt") command lines and environments"
	if grep -q "$SECRET" "$WORK/proc.txt"; then
		fail "the user reads the secret in $(grep "$SECRET" "$WORK/proc.txt" | head -n 1 | cut -c 1-300)"
	fi
	ok "the secret is in none of the /proc/*/cmdline and environ the user can read"
	page=$(head -n 1 "$ADMIN_DIR/browser.args")
	[[ $page =~ ^file:///.+/open\.html$ ]] || fail "the browser was given '$page', expected a file:// page"
	grep -qF "url=$LINK\"" "$ADMIN_DIR/browser.page" || fail "the page does not lead to the link: $(cat "$ADMIN_DIR/browser.page")"
	[ "$(cat "$ADMIN_DIR/browser.stat")" = "600 $ADMIN_NAME"$'\n'"700 $ADMIN_NAME" ] ||
		fail "the page and its directory are '$(tr '\n' ' ' <"$ADMIN_DIR/browser.stat")', expected 600 and 700, the admin's"
	"${as_user[@]}" cat "${page#file://}" >/dev/null 2>&1 && fail "the user can read the page"
	ok "the browser got $page (0600 in a 0700 directory, the admin's), which leads to the link"
	stop_view
	[ -e "${page#file://}" ] || [ -e "$(dirname "${page#file://}")" ] && fail "the page or its directory is left after view ended"
	ok "the page and its directory are removed when view ends"
	;;
browser)
	CHROMIUM=$(command -v chromium || command -v chromium-browser || true)
	[ -n "$CHROMIUM" ] || fail "chromium is not installed (scripts/install-deps.sh --test installs it)"
	make_admin
	# A front-end of our own: its from-url page fetches the profile the path names.
	start_background frontend "$NODE" -e 'const s = require("http").createServer((q, r) => {
	r.writeHead(200, { "Content-Type": "text/html" });
	r.end(`<!doctype html><html><body><pre id="out">pending</pre><script>
const m = location.pathname.match(/^\\/from-url\\/([^/]+)\\//);
const api = new URLSearchParams(location.search).get("symbolServer") + "/source/v1";
(async () => {
	const r = await fetch(decodeURIComponent(m[1]));
	const product = JSON.parse(await r.text()).meta.product;
	/* As the source view asks: a JSON POST, after a preflight. */
	const a = await fetch(api, { method: "POST", headers: { "Content-Type": "application/json" },
		body: JSON.stringify({ file: "/etc/hostname" }) });
	const answer = await a.json();
	document.getElementById("out").textContent = "status " + r.status + " product " + product +
		", source/v1 " + a.status + " " + Object.keys(answer).join(",");
})().catch((e) => { document.getElementById("out").textContent = "error " + e; });
</script></body></html>`);
}); s.listen(0, "127.0.0.1", () => console.log(s.address().port));'
	for ((i = 0; i < 200; i++)); do
		FRONT_PORT=$(head -n 1 "$WORK/frontend.out")
		[[ $FRONT_PORT =~ ^[0-9]+$ ]] && break
		sleep 0.05
	done
	[[ $FRONT_PORT =~ ^[0-9]+$ ]] || fail "the front-end printed no port: $(cat "$WORK/frontend.out")"
	# The browser: headless Chromium, as the admin, on what view gives it.
	cat >"$ADMIN_DIR/browser" <<EOF
#!/bin/sh
# A second try only when Chromium itself gave no page at all (it crashed
# starting up on a loaded machine, as once in CI): what the page shows is
# judged as before.
for try in 1 2; do
	timeout 120 "$CHROMIUM" --headless=new --no-sandbox --disable-gpu --no-first-run \\
		--user-data-dir="$ADMIN_DIR/chromium" --virtual-time-budget=20000 --dump-dom "\$1" \\
		>"$ADMIN_DIR/dom.html" 2>>"$ADMIN_DIR/chromium.err"
	[ -s "$ADMIN_DIR/dom.html" ] && break
done
echo "\$1" >"$ADMIN_DIR/browser.done"
sleep 120
EOF
	start_admin_view --profiler-url "http://127.0.0.1:$FRONT_PORT"
	for ((i = 0; i < 1200; i++)); do
		[ -s "$ADMIN_DIR/browser.done" ] && break
		sleep 0.1
	done
	[ -s "$ADMIN_DIR/browser.done" ] || fail "the browser did not finish in 120 s"
	got=$(sed -n 's/.*<pre id="out">\([^<]*\)<.*/\1/p' "$ADMIN_DIR/dom.html")
	[ "$got" = "status 200 product bpfprof, source/v1 200 error" ] ||
		fail "Chromium, given $(cat "$ADMIN_DIR/browser.done"), ended at '$got', expected 'status 200 product bpfprof, source/v1 200 error': $(head -c 300 "$ADMIN_DIR/dom.html"); its stderr ends: $(tail -c 300 "$ADMIN_DIR/chromium.err" 2>/dev/null)"
	ok "Chromium, given $(cat "$ADMIN_DIR/browser.done"), followed the page to the front-end, which fetched the profile and asked /source/v1 (preflight, POST) through CORS: $got"
	stop_view
	;;
source)
	SECRET_DIR=$(mktemp -d /var/tmp/bpfprof-secret.XXXXXX) || fail "mktemp -d failed"
	chmod 0755 "$SECRET_DIR"
	echo "ROOT-ONLY-KEY" >"$SECRET_DIR/key"
	chmod 0600 "$SECRET_DIR/key"
	mkdir -m 0700 "$SECRET_DIR/closed"
	echo "BEHIND-A-CLOSED-DOOR" >"$SECRET_DIR/closed/open.c"
	chmod 0644 "$SECRET_DIR/closed/open.c"
	ln -s closed/open.c "$SECRET_DIR/link.c"
	ln -s closed "$SECRET_DIR/linkdir"
	echo "/* world-readable source */" >"$SECRET_DIR/public.c"
	chmod 0644 "$SECRET_DIR/public.c"
	refused=("$SECRET_DIR/key" "$SECRET_DIR/closed/open.c" "$SECRET_DIR/link.c" "$SECRET_DIR/linkdir/open.c")
	# Each function's source file, as its debug info says (#line), is one of them.
	{
		echo 'volatile unsigned long sink;'
		n=0
		for f in "${refused[@]}" "$SECRET_DIR/public.c"; do
			printf '#line 1 "%s"\n__attribute__((noinline)) void spin%d(void) { for (unsigned long i = 0; i < 150000000UL; i++) sink += i; }\n' "$f" $n
			n=$((n + 1))
		done
		echo '#line 100 "app.c"'
		echo 'int main(void) { spin0(); spin1(); spin2(); spin3(); spin4(); return 0; }'
	} >"$USER_DIR/app.c"
	chown "$USER_NAME:" "$USER_DIR/app.c"
	(cd "$USER_DIR" && "${as_user[@]}" cc -g -O1 -fno-omit-frame-pointer -o app app.c) || fail "the user cannot build app.c"
	run_bpfprof 60 -o "$WORK/p.json.gz" -- "${as_user[@]}" "$USER_DIR/app"
	expect_success
	zcat "$WORK/p.json.gz" | "$NODE" -e 'let s = ""; process.stdin.on("data", (d) => (s += d)).on("end", () => {
		const p = JSON.parse(s), str = p.shared.stringArray;
		console.log(p.shared.sources.filename.map((i) => str[i]).join("\n"));
	});' >"$WORK/sources.txt"
	for f in "${refused[@]}" "$SECRET_DIR/public.c"; do
		grep -qxF "$f" "$WORK/sources.txt" || fail "the profile does not name $f as a source file: $(tr '\n' ' ' <"$WORK/sources.txt")"
	done
	ok "the profile of the user's binary names the 5 files as its source files"
	start_view "$WORK/p.json.gz"
	for f in "${refused[@]}"; do
		got=$(source_of "$f")
		grep -q 'ROOT-ONLY-KEY\|BEHIND-A-CLOSED-DOOR\|"source"' <<<"$got" && fail "/source/v1 served $f: ${got:0:200}"
		[[ $got == '{"error":'* ]] || fail "/source/v1 for $f: ${got:0:200}"
		ok "/source/v1 refuses $f: ${got:0:160}"
	done
	source_of "$SECRET_DIR/public.c" | grep -q 'world-readable source' ||
		fail "/source/v1 does not serve $SECRET_DIR/public.c, which every user may read: $(source_of "$SECRET_DIR/public.c")"
	ok "/source/v1 serves $SECRET_DIR/public.c, which every user may read"
	stop_view
	;;
source_viewer)
	# The admin who views owns a 0600 key in their 0700 directory; the
	# user's program names it as its source file (#line), and the admin's
	# own program names the admin's own 0600 file.
	make_admin
	chown "$ADMIN_NAME:" "$ADMIN_DIR" && chmod 0700 "$ADMIN_DIR"
	echo "ADMIN-PRIVATE-KEY" >"$ADMIN_DIR/id_rsa"
	echo "/* ADMIN-OWN-SOURCE */" >"$ADMIN_DIR/own.c"
	echo "/* world-readable source */" >"$USER_DIR/public.c"
	chmod 0644 "$USER_DIR/public.c"
	spin='__attribute__((noinline)) void spin%s(void) { for (unsigned long i = 0; i < 150000000UL; i++) sink += i; }\n'
	{
		echo 'volatile unsigned long sink;'
		printf '#line 1 "%s"\n'"$spin" "$ADMIN_DIR/id_rsa" 0 "$USER_DIR/public.c" 1
		echo '#line 100 "app.c"'
		echo 'int main(void) { spin0(); spin1(); return 0; }'
	} >"$USER_DIR/app.c"
	chown "$USER_NAME:" "$USER_DIR/app.c"
	(cd "$USER_DIR" && "${as_user[@]}" cc -g -O1 -fno-omit-frame-pointer -o app app.c) || fail "the user cannot build app.c"
	{
		echo 'volatile unsigned long sink;'
		printf '#line 1 "%s"\n'"$spin" "$ADMIN_DIR/own.c" 0
		echo '#line 100 "own_main.c"'
		echo 'int main(void) { spin0(); return 0; }'
	} >"$ADMIN_DIR/own_app.c"
	cc -g -O1 -fno-omit-frame-pointer -o "$ADMIN_DIR/own_app" "$ADMIN_DIR/own_app.c" || fail "cannot build own_app.c"
	chown -R "$ADMIN_NAME:" "$ADMIN_DIR"
	chmod 0600 "$ADMIN_DIR/id_rsa" "$ADMIN_DIR/own.c"
	# Root records both programs at once, each run as its user.
	admin_as=(setpriv --reuid "$ADMIN_NAME" --regid "$ADMIN_NAME" --clear-groups)
	run_bpfprof 60 -o "$WORK/p.json.gz" -- bash -c "$(printf '%q ' "${as_user[@]}" "$USER_DIR/app") & $(printf '%q ' "${admin_as[@]}" "$ADMIN_DIR/own_app"); wait"
	expect_success
	cp "$WORK/p.json.gz" "$ADMIN_DIR/p.json.gz"
	printf '#!/bin/sh\nexit 0\n' >"$ADMIN_DIR/browser"
	start_admin_view --no-open
	got=$(source_of "$ADMIN_DIR/id_rsa")
	grep -q 'ADMIN-PRIVATE-KEY\|"source"' <<<"$got" &&
		fail "the admin's view served the admin's 0600 $ADMIN_DIR/id_rsa, named by the user's program: ${got:0:200}"
	[[ $got == '{"error":'* ]] || fail "/source/v1 for $ADMIN_DIR/id_rsa: ${got:0:200}"
	ok "the admin's view refuses the admin's 0600 key named by the user's program: ${got:0:200}"
	# Controls: the admin's own program's private source, and a file every user may read.
	source_of "$ADMIN_DIR/own.c" | grep -q 'ADMIN-OWN-SOURCE' ||
		fail "the admin's view does not serve the admin's 0600 $ADMIN_DIR/own.c, named by the admin's own program: $(source_of "$ADMIN_DIR/own.c")"
	ok "the admin's view serves the admin's 0600 source file named by the admin's own program"
	source_of "$USER_DIR/public.c" | grep -q 'world-readable source' ||
		fail "the admin's view does not serve $USER_DIR/public.c, which every user may read: $(source_of "$USER_DIR/public.c")"
	ok "the admin's view serves $USER_DIR/public.c (the user's program names it; every user may read it)"
	stop_view
	;;
cors)
	small_profile
	start_view "$WORK/p.json.gz"
	for origin in https://evil.example null http://127.0.0.1 https://profiler.firefox.com.evil.example; do
		curl -s -D "$WORK/h" -o /dev/null -H "Origin: $origin" "$URL"
		curl -s -D "$WORK/hp" -o /dev/null -X OPTIONS -H "Origin: $origin" "${URL%/*}/source/v1"
		curl -s -D "$WORK/hs" -o /dev/null -H "Origin: $origin" --data-binary '{"file":"/etc/hostname"}' "${URL%/*}/source/v1"
		if grep -qi '^Access-Control-Allow-Origin' "$WORK/h" "$WORK/hp" "$WORK/hs"; then
			fail "Origin: $origin gets $(grep -hi '^Access-Control-Allow-Origin' "$WORK/h" "$WORK/hp" "$WORK/hs" | head -n 1 | tr -d '\r')"
		fi
	done
	ok "Origin https://evil.example, null, http://127.0.0.1, https://profiler.firefox.com.evil.example: no Access-Control-Allow-Origin (profile, preflight, /source/v1)"
	curl -s -D "$WORK/h" -o /dev/null -H "Origin: https://profiler.firefox.com" "$URL"
	grep -qi '^Access-Control-Allow-Origin: https://profiler.firefox.com.$' "$WORK/h" ||
		fail "Origin: https://profiler.firefox.com gets no Access-Control-Allow-Origin for it: $(tr -d '\r' <"$WORK/h")"
	ok "Origin https://profiler.firefox.com gets Access-Control-Allow-Origin: https://profiler.firefox.com"
	stop_view
	;;
host)
	small_profile
	start_view "$WORK/p.json.gz"
	for host in "evil.example:$PORT" "evil.example" "127.0.0.1.evil.example:$PORT" "localhost.evil.example:$PORT" "[::1]x"; do
		st=$(curl -s -o /dev/null -w '%{http_code}' -H "Host: $host" "$URL")
		[ "$st" = 403 ] || fail "Host: $host gets $st, expected 403"
		st=$(curl -s -o /dev/null -w '%{http_code}' -H "Host: $host" --data-binary '{"file":"/etc/hostname"}' "${URL%/*}/source/v1")
		[ "$st" = 403 ] || fail "Host: $host gets $st for /source/v1, expected 403"
	done
	ok "Host evil.example(:PORT), 127.0.0.1.evil.example, localhost.evil.example, [::1]x: 403"
	for host in "127.0.0.1:$PORT" "localhost:$PORT" "LOCALHOST"; do
		st=$(curl -s -o /dev/null -w '%{http_code}' -H "Host: $host" "$URL")
		[ "$st" = 200 ] || fail "Host: $host gets $st, expected 200"
	done
	ok "Host 127.0.0.1:$PORT, localhost:$PORT, LOCALHOST: 200"
	stop_view
	;;
idle)
	small_profile
	start_view "$WORK/p.json.gz"
	# 3,000 connections, each opened again as soon as it closes; they send nothing.
	hold_connections "$USER_DIR" "$PORT" 3000 "${as_user[@]}"
	# The admin's requests, while the user holds them: each must be answered.
	worst=0
	for ((k = 0; k < 5; k++)); do
		got=$(curl -s -o "$WORK/got" -w '%{http_code} %{time_total}' --max-time 10 "$URL")
		log "admin's request $((k + 1)): $got; the user: $(tail -n 1 "$WORK/hold.out")"
		[ "${got% *}" = 200 ] && cmp -s "$WORK/got" "$WORK/p.json.gz" ||
			fail "the admin's request $((k + 1)) got '$got' while the user holds 3000 connections"
		worst=$(awk -v a="$worst" -v b="${got#* }" 'BEGIN { print (b > a) ? b : a }')
		sleep 1
	done
	ok "5 of 5 of the admin's requests answered in ${worst}s at most, while the user keeps 3000 connections open or opening ($(tail -n 1 "$WORK/hold.out"): view keeps 16 of them, closes the rest at once)"
	kill -KILL "$HOLD_PID"
	stop_view
	;;
*)
	fail "unknown mode $MODE"
	;;
esac
