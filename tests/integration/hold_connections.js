// SPDX-License-Identifier: BSD-2-Clause
//
// hold_connections.js PORT N: another user's N connections to 127.0.0.1:PORT,
// each opened again as soon as it closes; they send nothing. Prints
// "open O made M closed C" every 500 ms. Copied by the tests to where the
// unprivileged user can read it.
const net = require("net");
const [port, want] = process.argv.slice(2).map(Number);
let open = 0, made = 0, closed = 0;
function connect() {
	const s = net.connect(port, "127.0.0.1");
	let up = false;
	s.on("connect", () => { up = true; open++; made++; });
	s.on("error", () => {});
	s.on("close", () => { if (up) open--; closed++; setImmediate(connect); });
}
for (let i = 0; i < want; i++) connect();
setInterval(() => console.log(`open ${open} made ${made} closed ${closed}`), 500);
