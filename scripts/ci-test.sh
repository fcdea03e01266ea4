#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# The whole CI run, and what a developer runs to reproduce it: install the
# build and test dependencies, configure, build on every core, run ctest.
# Exits with ctest's status.  Must run as root (apt, and the integration
# tests load BPF programs).

set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."

echo "ci-test: installing dependencies"
./scripts/install-deps.sh --test

echo "ci-test: configuring"
cmake -B build -S . -DCMAKE_BUILD_TYPE=RelWithDebInfo

echo "ci-test: building with $(nproc) jobs"
cmake --build build -j "$(nproc)"

echo "ci-test: testing"
exec ctest --test-dir build --output-on-failure
