#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
#
# ctest fixture: installs the pinned npm dependencies of tests/check (the
# Firefox Profiler's loader, @firefox-devtools/profiler-cli) into the build
# tree, so that the checkers run against exactly the version in the lock file.
#
# Usage: npm_ci.sh SOURCE_DIR(tests/check) DEST_DIR(build/check)
set -eu

src=$1
dst=$2
cli=node_modules/@firefox-devtools/profiler-cli/dist/profiler-cli.js

if ! command -v npm >/dev/null || ! command -v node >/dev/null; then
	echo "FAIL npm_ci: node and npm are needed (Debian: apt-get install nodejs npm)"
	exit 1
fi
mkdir -p "$dst"
# Same lock and the package present: nothing to do, and no registry needed.
if cmp -s "$src/package-lock.json" "$dst/package-lock.json" && cmp -s "$src/package.json" "$dst/package.json" &&
	[ -f "$dst/$cli" ]; then
	echo "npm_ci: $dst/node_modules is up to date with tests/check/package-lock.json"
	exit 0
fi
cp "$src/package.json" "$src/package-lock.json" "$dst/"
cd "$dst"
# The CLI declares node >= 24 but runs on the node 20 of Debian 12 (see the
# format spec, section 12); npm only warns about that.
npm ci --no-audit --no-fund --loglevel=error
if [ ! -f "$cli" ]; then
	echo "FAIL npm_ci: $dst/$cli is missing after npm ci"
	exit 1
fi
version=$(node -p 'require("@firefox-devtools/profiler-cli/package.json").version')
echo "npm_ci: @firefox-devtools/profiler-cli $version installed in $dst/node_modules"
