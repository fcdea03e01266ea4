#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
#
# `bpfprof view FILE --no-open` (issue 19): a profile it just recorded is
# served on 127.0.0.1 only, under a random path: the exact bytes with
# Content-Encoding: gzip and, for the front-end's origin only, the CORS
# header, a 204 CORS preflight, a 404 for every other path (the path
# without its secret, a wrong secret, the root) and a 405 for other
# methods. The printed link is the profiler's from-url route with the URL
# encoded as encodeURIComponent does. Headless Chromium on another origin (a
# page of a front-end given with --profiler-url) fetches it through CORS and
# gets the decompressed JSON. A plain .json is served without
# Content-Encoding.
# SIGINT stops it with status 0 and closes the port. `bpfprof --view -- cmd`
# serves what it just wrote the same way. The link names the secret's
# directory as the profiler's symbol server, whose /source/v1 gives the
# source view the text of the files the profile names, and nothing else, and
# whose /asm/v1 disassembles a function of a library it names (as objdump).
. "$(dirname "$0")/common.sh"
require_root
make_workdir

CHROMIUM=$(command -v chromium || command -v chromium-browser || true)
[ -n "$CHROMIUM" ] || fail "chromium is not installed (scripts/install-deps.sh --test installs it)"

run_bpfprof 60 -o "$WORK/p.json.gz" -- sleep 0.3
expect_success
zcat "$WORK/p.json.gz" >"$WORK/p.json"

PUBLIC_DIR=

# start_serving ARGS...: bpfprof ARGS in the background, until it says it
# serves; sets VIEW_PID, URL, LINK, PORT.
start_serving() {
	log "\$ bpfprof $* &"
	# Emptied here: the background job's own redirections run later, and the
	# loop below would find the previous server's line (failed once in CI).
	: >"$WORK/view.out"
	: >"$WORK/view.err"
	env --default-signal=INT,TERM "$BPFPROF" "$@" >"$WORK/view.out" 2>"$WORK/view.err" &
	VIEW_PID=$!
	# A failure must not leave a server (or a recording, with --view) running.
	trap 'kill -KILL "$VIEW_PID" 2>/dev/null; [ -z "$PUBLIC_DIR" ] || rm -rf "$PUBLIC_DIR"; common_exit' EXIT
	wait_view_serving "$VIEW_PID"
	LINK=$(head -n 1 "$WORK/view.out")
	PORT=$(sed -n 's|^http://127\.0\.0\.1:\([0-9]*\)/.*|\1|p' <<<"$URL")
	[[ $PORT =~ ^[0-9]+$ ]] || fail "bpfprof printed no http://127.0.0.1:PORT/... URL: $(cat "$WORK/view.err")"
	log "serving at $URL"
}

serve() {
	start_serving view "$1" --no-open
}

# status METHOD URL: the HTTP status curl gets.
status() {
	curl -s -o /dev/null -w '%{http_code}' -X "$1" "$2"
}

# encodeURIComponent, as the front-end undoes it.
encode() {
	"$NODE" -e 'console.log(encodeURIComponent(process.argv[1]))' "$1"
}

serve "$WORK/p.json.gz"
want="https://profiler.firefox.com/from-url/$(encode "$URL")/?symbolServer=$(encode "${URL%/*}")"
[ "$LINK" = "$want" ] || fail "the link is '$LINK', expected '$want'"
ok "the link is the profiler's from-url route with the URL encoded, and the secret's directory as its symbol server"
[[ $URL =~ ^http://127\.0\.0\.1:[0-9]+/[0-9a-f]{32}/p\.json\.gz$ ]] || fail "unexpected URL shape: $URL"
ok "the path has a 128-bit random prefix"

listen=$(ss -ltnH "sport = :$PORT" | awk '{ print $4 }' | sort -u)
[ "$listen" = "127.0.0.1:$PORT" ] || fail "listening on '$listen', expected only 127.0.0.1:$PORT"
ok "it listens on 127.0.0.1:$PORT only"

curl -s -H 'Origin: https://profiler.firefox.com' -D "$WORK/headers" -o "$WORK/got" "$URL" || fail "curl $URL failed"
grep -qi '^HTTP/1.1 200' "$WORK/headers" || fail "GET: $(head -n 1 "$WORK/headers")"
grep -qi '^Access-Control-Allow-Origin: https://profiler.firefox.com' "$WORK/headers" ||
	fail "GET from the profiler's origin: no Access-Control-Allow-Origin: https://profiler.firefox.com"
grep -qi '^Content-Encoding: gzip' "$WORK/headers" || fail "GET: no Content-Encoding: gzip for a .gz profile"
cmp -s "$WORK/got" "$WORK/p.json.gz" || fail "GET: the bytes differ from the file"
ok "GET gives the file's bytes, with the CORS header for the profiler's origin and Content-Encoding: gzip"
[ "$(status HEAD "$URL")" = 200 ] || fail "HEAD is not 200"
[ "$(status OPTIONS "$URL")" = 204 ] || fail "the CORS preflight (OPTIONS) is not 204"
[ "$(status POST "$URL")" = 405 ] || fail "POST is not 405"
secret_path=${URL#http://127.0.0.1:$PORT}
for other in "http://127.0.0.1:$PORT/" "http://127.0.0.1:$PORT/p.json.gz" \
	"http://127.0.0.1:$PORT${secret_path%/*}/" "http://127.0.0.1:$PORT/00000000000000000000000000000000/p.json.gz" \
	"${URL}x" "http://127.0.0.1:$PORT${secret_path%/*}/../p.json.gz"; do
	[ "$(status GET "$other")" = 404 ] || fail "GET $other is not 404"
done
ok "HEAD 200, OPTIONS 204, POST 405, and 404 for every other path"

# A real browser page on another origin, a front-end of our own on another
# port (--profiler-url): fetch through CORS, gunzip by the browser.
kill -INT "$VIEW_PID"
wait "$VIEW_PID" || fail "bpfprof view exited non-zero after SIGINT"
start_background page "$NODE" -e 'const fs = require("fs"), s = require("http").createServer((q, r) => {
	r.writeHead(200, { "Content-Type": "text/html" });
	r.end(fs.readFileSync(process.argv[1]));
}); s.listen(0, "127.0.0.1", () => console.log(s.address().port));' "$WORK/page.html"
for ((i = 0; i < 200; i++)); do
	PAGE_PORT=$(head -n 1 "$WORK/page.out")
	[[ $PAGE_PORT =~ ^[0-9]+$ ]] && break
	sleep 0.05
done
[[ $PAGE_PORT =~ ^[0-9]+$ ]] || fail "the page server printed no port: $(cat "$WORK/page.out")"
start_serving view "$WORK/p.json.gz" --no-open --profiler-url "http://127.0.0.1:$PAGE_PORT/"
[[ $LINK == "http://127.0.0.1:$PAGE_PORT/from-url/$(encode "$URL")/?symbolServer="* ]] ||
	fail "with --profiler-url http://127.0.0.1:$PAGE_PORT/ the link is $LINK"
ok "--profiler-url http://127.0.0.1:$PAGE_PORT/: the link is that front-end's from-url route"
cat >"$WORK/page.html" <<HTML
<!doctype html><html><body><pre id="out">pending</pre><script>
fetch("$URL").then(async (r) => {
  const text = await r.text();
  document.getElementById("out").textContent = "status " + r.status + " chars " + text.length +
    " product " + JSON.parse(text).meta.product;
}).catch((e) => { document.getElementById("out").textContent = "error " + e; });
</script></body></html>
HTML
got=$(timeout 120 "$CHROMIUM" --headless=new --no-sandbox --disable-gpu --no-first-run \
	--user-data-dir="$WORK/chromium" --virtual-time-budget=20000 --dump-dom "http://127.0.0.1:$PAGE_PORT/page.html" 2>/dev/null |
	sed -n 's/.*<pre id="out">\([^<]*\)<.*/\1/p')
log "headless Chromium: $got"
want_chars=$("$NODE" -e 'console.log(require("fs").readFileSync(process.argv[1], "utf8").length)' "$WORK/p.json")
[ "$got" = "status 200 chars $want_chars product bpfprof" ] ||
	fail "Chromium's cross-origin fetch gave '$got', expected 'status 200 chars $want_chars product bpfprof'"
ok "Chromium on the front-end's page fetched it through CORS and read the profile ($want_chars characters)"

kill -INT "$VIEW_PID"
wait "$VIEW_PID"
st=$?
[ "$st" -eq 0 ] || fail "bpfprof view exited $st after SIGINT"
[ -z "$(ss -ltnH "sport = :$PORT")" ] || fail "port $PORT still open after SIGINT"
ok "SIGINT: exit 0, port closed"

# The source view (/source/v1 under the secret): a profile of the burner,
# built with debug info, names burner.c; its text comes back, nothing else does.
# view shows root only what every user may read along the whole path (issue
# 27), and the build tree may be in a 0700 directory (a clone in /root): the
# burner is built again from a copy in a directory every user can read.
PUBLIC_DIR=$(mktemp -d /var/tmp/bpfprof-view-public.XXXXXX) || fail "mktemp -d failed"
chmod 0755 "$PUBLIC_DIR"
cp "$(dirname "$0")/../workloads/burner.c" "$(dirname "$0")/../workloads/workload.h" "$PUBLIC_DIR/"
chmod 0644 "$PUBLIC_DIR/burner.c" "$PUBLIC_DIR/workload.h"
cc -g -O1 -fno-omit-frame-pointer -fno-inline -pthread -o "$PUBLIC_DIR/burner" "$PUBLIC_DIR/burner.c" && chmod 0755 "$PUBLIC_DIR/burner" ||
	fail "cannot build the burner in $PUBLIC_DIR"
BURNER=$PUBLIC_DIR/burner
run_bpfprof 60 -o "$WORK/src.json.gz" -- "$BURNER" 1
expect_success
src=$(zcat "$WORK/src.json.gz" | "$NODE" -e 'let s = ""; process.stdin.on("data", (d) => (s += d)).on("end", () => {
	const p = JSON.parse(s), str = p.shared.stringArray;
	console.log(p.shared.sources.filename.map((i) => str[i]).find((f) => f.endsWith("/burner.c")) || "");
});')
[ -f "$src" ] || fail "the burner's profile names no burner.c among its source files"
serve "$WORK/src.json.gz"
SOURCE=${URL%/*}/source/v1
source_of() {
	curl -s -X POST --data-binary "{\"debugName\":\"burner\",\"debugId\":\"0\",\"moduleOffset\":\"0x1\",\"file\":\"$1\"}" "$SOURCE"
}
source_of "$src" | "$NODE" -e 'let s = ""; process.stdin.on("data", (d) => (s += d)).on("end", () => {
	const a = JSON.parse(s), want = require("fs").readFileSync(process.argv[1], "utf8");
	process.exit(a.source === want && a.file === process.argv[1] ? 0 : 1);
});' "$src" || fail "/source/v1 did not answer $src with its text"
ok "/source/v1 answers $src with its text ($(wc -c <"$src") bytes)"
for other in /etc/passwd /etc/shadow "$WORK/src.json.gz"; do
	got=$(source_of "$other")
	[[ $got == '{"error":"'"$other"': the profile names no such source file"}' ]] ||
		fail "/source/v1 for $other, which the profile does not name: $got"
done
ok "/source/v1 refuses files the profile does not name (/etc/passwd, /etc/shadow, the profile)"
[ "$(status OPTIONS "$SOURCE")" = 204 ] || fail "the preflight of /source/v1 is not 204"
[ "$(status GET "$SOURCE")" = 404 ] || fail "GET /source/v1 is not 404"
[ "$(head -c 70000 /dev/zero | curl -s -o /dev/null -w '%{http_code}' --data-binary @- "$SOURCE")" = 413 ] ||
	fail "a 70 kB request to /source/v1 is not 413"
wrong="http://127.0.0.1:$PORT/00000000000000000000000000000000/source/v1"
[ "$(curl -s -o /dev/null -w '%{http_code}' --data-binary '{"file":"'"$src"'"}' "$wrong")" = 404 ] ||
	fail "/source/v1 under a wrong secret is not 404"
ok "/source/v1: OPTIONS 204, GET 404, a request over 64 KiB 413, a wrong secret 404"
# The assembly view (/asm/v1): alpha_heavy as the profile's nativeSymbols
# cite it, disassembled; its instructions start where objdump's do.
read -r lib_name lib_id lib_path start size < <(zcat "$WORK/src.json.gz" | "$NODE" -e '
let s = ""; process.stdin.on("data", (d) => (s += d)).on("end", () => {
	const p = JSON.parse(s), ns = p.shared.nativeSymbols, str = p.shared.stringArray;
	const i = ns.name.findIndex((n) => str[n] === "alpha_heavy");
	if (i < 0) return;
	const lib = p.libs[ns.libIndex[i]];
	console.log(lib.debugName, lib.breakpadId, lib.path, ns.address[i], ns.functionSize[i]);
});')
[ -n "$start" ] && [ "$lib_path" = "$BURNER" ] || fail "the burner's profile cites no native symbol alpha_heavy in $BURNER"
curl -s -X POST --data-binary "{\"debugName\":\"$lib_name\",\"debugId\":\"$lib_id\",\"name\":\"$lib_name\",\"codeId\":null,\"startAddress\":\"0x$(printf %x "$start")\",\"size\":\"0x$(printf %x "$size")\",\"continueUntilFunctionEnd\":false}" \
	"${URL%/*}/asm/v1" >"$WORK/asm.json"
base=$(readelf -lW "$BURNER" | awk '$1 == "LOAD" { print $3; exit }')
objdump -d --no-show-raw-insn --start-address=$((base + start)) --stop-address=$((base + start + size)) "$BURNER" |
	sed -n 's/^ *\([0-9a-f]*\):\t.*/\1/p' >"$WORK/objdump.addrs"
"$NODE" -e '
const fs = require("fs"), a = JSON.parse(fs.readFileSync(process.argv[1], "utf8"));
const want = fs.readFileSync(process.argv[2], "utf8").trim().split("\n").map((x) => parseInt(x, 16) - Number(process.argv[3]));
const got = (a.instructions || []).map((i) => parseInt(a.startAddress, 16) + i[0]);
const same = got.length === want.length && got.every((x, k) => x === want[k]);
console.log(`${same ? "ok  " : "FAIL"} /asm/v1: ${got.length} instructions of alpha_heavy (objdump: ${want.length}), ` +
	`first "${a.instructions?.[0]?.[1]}"${a.error ? `; error: ${a.error}` : ""}`);
process.exit(same && got.length > 2 ? 0 : 1);
' "$WORK/asm.json" "$WORK/objdump.addrs" "$((base))" || fail "/asm/v1 did not disassemble alpha_heavy as objdump does"
kill -TERM "$VIEW_PID"
wait "$VIEW_PID" || fail "bpfprof view exited non-zero after SIGTERM"

serve "$WORK/p.json"
curl -s -D "$WORK/headers" -o "$WORK/got" "$URL" || fail "curl $URL failed"
grep -qi '^Content-Encoding' "$WORK/headers" && fail "a plain .json went out with a Content-Encoding"
cmp -s "$WORK/got" "$WORK/p.json" || fail "GET of the .json: the bytes differ from the file"
ok "a plain .json is served as is"
kill -TERM "$VIEW_PID"
wait "$VIEW_PID" || fail "bpfprof view exited non-zero after SIGTERM"
ok "SIGTERM: exit 0"

# record --view: the profile it just wrote, served the same way once written.
start_serving --view -o "$WORK/r.json.gz" -- sleep 0.3
grep -q "^bpfprof: wrote $WORK/r.json.gz" "$WORK/view.err" || fail "bpfprof --view served before it said it wrote the file"
curl -s -o "$WORK/got" "$URL" || fail "curl $URL failed"
cmp -s "$WORK/got" "$WORK/r.json.gz" || fail "record --view: the bytes differ from the file it wrote"
[[ $LINK == https://profiler.firefox.com/from-url/* ]] || fail "record --view printed no link"
kill -INT "$VIEW_PID"
wait "$VIEW_PID" || fail "bpfprof --view exited non-zero after SIGINT"
ok "record --view serves the profile it wrote until SIGINT, then exits 0"
