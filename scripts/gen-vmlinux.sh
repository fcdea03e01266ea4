#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Regenerate vmlinux/<arch>/vmlinux.h, the CO-RE type header the BPF side is
# compiled against.  The header only has to carry the types and field names we
# use; CO-RE relocations fix offsets on the running kernel, so one header per
# architecture is enough and it does not need to match the target kernel.
#
# BTF sources, in order of preference:
#   --btf FILE    a raw BTF file or an ELF vmlinux with a .BTF section
#   --image FILE  a kernel boot image (vmlinuz / Image); BTF is carved out of
#                 it by extract-btf.py
#   (host arch)   /sys/kernel/btf/vmlinux of the running kernel
#   (other arch)  the newest Debian linux-image package for that architecture,
#                 fetched with a private apt state in a temporary directory, so
#                 neither dpkg's architecture list nor the host's apt lists
#                 change and nothing is installed
#
# Needs bpftool; the Debian path needs apt-get, dpkg-deb and python3; the
# compile check needs clang and libbpf's headers.  Root is not required.

set -euo pipefail

SCRIPT_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO_DIR=$(dirname "$SCRIPT_DIR")

usage() {
	cat <<EOF
Usage: $0 [options]

  -a, --arch ARCH     x86_64 or arm64 (default: this machine's)
      --btf FILE      dump types from this BTF file or ELF vmlinux
      --image FILE    carve BTF out of this kernel image (vmlinuz/Image)
      --package PKG[=VERSION]
                      Debian package to take the kernel image from (default:
                      the newest linux-image-[X.Y-]FLAVOUR meta package, where
                      FLAVOUR is amd64 or arm64); meta packages are followed
      --suite SUITE   Debian release to look in, with its -updates, -security
                      and -backports (default: this machine's codename)
      --mirror URL    Debian archive URL (default: the one in this machine's
                      apt sources for SUITE)
      --security-mirror URL
                      Debian security archive URL (default: likewise)
  -o, --output FILE   header to write (default: vmlinux/ARCH/vmlinux.h)
      --no-check      do not compile-test the generated header
  -h, --help          show this help

Without --btf/--image: the running kernel's BTF when ARCH is this machine's,
otherwise a Debian kernel package.
EOF
}

die() {
	echo "gen-vmlinux: error: $*" >&2
	exit 1
}

step() {
	echo "gen-vmlinux: $*" >&2
}

# Map any spelling of an architecture to ours (the vmlinux/ directory names).
norm_arch() {
	case "$1" in
	x86_64 | amd64 | x86) echo x86_64 ;;
	aarch64 | arm64) echo arm64 ;;
	*) die "unsupported architecture '$1' (x86_64 or arm64)" ;;
	esac
}

deb_arch() {
	case "$1" in
	x86_64) echo amd64 ;;
	arm64) echo arm64 ;;
	esac
}

# __TARGET_ARCH_* as libbpf's bpf_tracing.h spells it.
bpf_target_arch() {
	case "$1" in
	x86_64) echo x86 ;;
	arm64) echo arm64 ;;
	esac
}

find_bpftool() {
	# Debian puts bpftool in /usr/sbin, which is not in a user's PATH.
	if command -v bpftool >/dev/null 2>&1; then
		command -v bpftool
	elif [ -x /usr/sbin/bpftool ]; then
		echo /usr/sbin/bpftool
	else
		die "bpftool not found (scripts/install-deps.sh installs it)"
	fi
}

# The archive URL this machine's apt uses for a suite, e.g. bookworm or
# bookworm-security.  Read from apt's own view of its sources so deb822 and
# one-line formats both work and no host name is hard-coded here.
host_repo_uri() {
	# shellcheck disable=SC2016 # $(...) are apt's format fields
	apt-get indextargets --no-release-info \
		--format '$(RELEASE) $(REPO_URI)' 'Identifier: Packages' |
		awk -v s="$1" '$1 == s { print $2; exit }'
}

ARCH=
BTF=
IMAGE=
PACKAGE=
SUITE=
MIRROR=
SECURITY_MIRROR=
OUTPUT=
CHECK=1

while [ $# -gt 0 ]; do
	case "$1" in
	-a | --arch) ARCH=${2:?"$1 needs a value"}; shift 2 ;;
	--btf) BTF=${2:?"$1 needs a value"}; shift 2 ;;
	--image) IMAGE=${2:?"$1 needs a value"}; shift 2 ;;
	--package) PACKAGE=${2:?"$1 needs a value"}; shift 2 ;;
	--suite) SUITE=${2:?"$1 needs a value"}; shift 2 ;;
	--mirror) MIRROR=${2:?"$1 needs a value"}; shift 2 ;;
	--security-mirror) SECURITY_MIRROR=${2:?"$1 needs a value"}; shift 2 ;;
	-o | --output) OUTPUT=${2:?"$1 needs a value"}; shift 2 ;;
	--no-check) CHECK=0; shift ;;
	-h | --help) usage; exit 0 ;;
	*) usage >&2; die "unknown option '$1'" ;;
	esac
done

[ -n "$BTF" ] && [ -n "$IMAGE" ] && die "--btf and --image exclude each other"

HOST_ARCH=$(norm_arch "$(uname -m)")
ARCH=$(norm_arch "${ARCH:-$HOST_ARCH}")
OUTPUT=${OUTPUT:-$REPO_DIR/vmlinux/$ARCH/vmlinux.h}
BPFTOOL=$(find_bpftool)

TMP=$(mktemp -d "${TMPDIR:-/tmp}/gen-vmlinux.XXXXXX")
trap 'rm -rf "$TMP"' EXIT

# Download the newest Debian kernel image package for $ARCH and set IMAGE to
# the vmlinuz inside it.  Everything apt touches lives under $TMP/apt.
fetch_debian_image() {
	local darch apt_dir sources codename
	darch=$(deb_arch "$ARCH")
	command -v apt-get >/dev/null || die "apt-get is needed to fetch a Debian kernel"
	command -v dpkg-deb >/dev/null || die "dpkg-deb is needed to unpack a Debian kernel"

	if [ -z "$SUITE" ]; then
		# shellcheck source=/dev/null
		codename=$(. /etc/os-release && [ "${ID:-}" = debian ] && echo "${VERSION_CODENAME:-}") || true
		[ -n "$codename" ] || die "not a Debian machine: give --suite and --mirror"
		SUITE=$codename
	fi
	MIRROR=${MIRROR:-$(host_repo_uri "$SUITE")}
	SECURITY_MIRROR=${SECURITY_MIRROR:-$(host_repo_uri "$SUITE-security")}
	[ -n "$MIRROR" ] || die "no apt source for '$SUITE' on this machine: give --mirror"

	apt_dir=$TMP/apt
	mkdir -p "$apt_dir/lists/partial" "$apt_dir/cache/archives/partial" "$apt_dir/deb"
	local opts=""
	[ -r /usr/share/keyrings/debian-archive-keyring.gpg ] &&
		opts=" signed-by=/usr/share/keyrings/debian-archive-keyring.gpg"
	sources=$apt_dir/sources.list
	{
		echo "deb [arch=$darch$opts] $MIRROR $SUITE main"
		echo "deb [arch=$darch$opts] $MIRROR $SUITE-updates main"
		echo "deb [arch=$darch$opts] $MIRROR $SUITE-backports main"
		[ -n "$SECURITY_MIRROR" ] &&
			echo "deb [arch=$darch$opts] $SECURITY_MIRROR $SUITE-security main"
	} >"$sources"

	# A private apt: own sources, lists, cache and an empty dpkg status, and
	# no host preferences that could pin versions.  As root apt would drop
	# to the _apt user, who cannot write into our mktemp directory.
	APT_OPTS=(
		-o "Dir::Etc::SourceList=$sources"
		-o "Dir::Etc::SourceParts=$apt_dir/none"
		-o "Dir::Etc::Preferences=$apt_dir/none"
		-o "Dir::Etc::PreferencesParts=$apt_dir/none"
		-o "Dir::State::Lists=$apt_dir/lists"
		-o "Dir::State::status=$apt_dir/status"
		-o "Dir::Cache=$apt_dir/cache"
		-o "APT::Architecture=$darch"
		-o "APT::Architectures::=$darch"
		-o "APT::Sandbox::User=$(id -un)"
		-q
	)
	: >"$apt_dir/status"

	step "reading Debian $SUITE package lists for $darch from $MIRROR"
	apt-get "${APT_OPTS[@]}" update >"$apt_dir/update.log" 2>&1 ||
		{ cat "$apt_dir/update.log" >&2; die "apt-get update failed"; }

	local pkg ver best_pkg="" best_ver=""
	if [ -n "$PACKAGE" ]; then
		best_pkg=${PACKAGE%%=*}
		[ "$PACKAGE" = "$best_pkg" ] || best_ver=${PACKAGE#*=}
	else
		# Meta packages: linux-image-arm64 and the versioned series
		# ones (linux-image-6.12-arm64) that security/backports carry.
		while read -r pkg ver; do
			if [ -z "$best_ver" ] || dpkg --compare-versions "$ver" gt "$best_ver"; then
				best_pkg=$pkg
				best_ver=$ver
			fi
		done < <(apt-cache "${APT_OPTS[@]}" pkgnames linux-image- |
			grep -E "^linux-image-([0-9]+\.[0-9]+-)?$darch\$" |
			xargs -r apt-cache "${APT_OPTS[@]}" madison |
			awk -F' *\\| *' '{ gsub(/ /, "", $1); print $1, $2 }')
		[ -n "$best_pkg" ] || die "no linux-image-*-$darch package in $SUITE"
	fi
	if [ -z "$best_ver" ]; then
		# An explicitly named package: take what apt would install.
		best_ver=$(apt-cache "${APT_OPTS[@]}" policy "$best_pkg" |
			awk '$1 == "Candidate:" && $2 != "(none)" { print $2 }')
		[ -n "$best_ver" ] || die "package '$best_pkg' not found in $SUITE"
	fi

	# Follow meta packages down to the one that ships /boot/vmlinuz-*.
	local dep i
	for i in 1 2 3 4; do
		dep=$(apt-cache "${APT_OPTS[@]}" show "$best_pkg=$best_ver" |
			sed -n 's/^Depends: //p' | head -n1 | tr ',' '\n' |
			sed -n 's/^ *\(linux-image-[^ ]*\) *(= *\([^)]*\)).*/\1 \2/p' | head -n1)
		[ -n "$dep" ] || break
		best_pkg=${dep% *}
		best_ver=${dep#* }
		[ "$i" -lt 4 ] || die "meta package chain too long at $best_pkg"
	done

	step "downloading $best_pkg $best_ver ($darch)"
	(cd "$apt_dir/deb" && apt-get "${APT_OPTS[@]}" download "$best_pkg=$best_ver" \
		>"$apt_dir/download.log" 2>&1) ||
		{ cat "$apt_dir/download.log" >&2; die "apt-get download failed"; }

	mkdir -p "$TMP/root"
	dpkg-deb --fsys-tarfile "$apt_dir"/deb/*.deb |
		tar -x -C "$TMP/root" --wildcards './boot/vmlinuz-*' ||
		die "$best_pkg has no /boot/vmlinuz-*"
	IMAGE=$(find "$TMP/root/boot" -name 'vmlinuz-*' | head -n1)
	SOURCE="Debian package $best_pkg $best_ver ($darch), /boot/$(basename "$IMAGE")"
}

SOURCE=
if [ -z "$BTF" ] && [ -z "$IMAGE" ]; then
	if [ "$ARCH" = "$HOST_ARCH" ]; then
		BTF=/sys/kernel/btf/vmlinux
		[ -r "$BTF" ] || die "$BTF missing: kernel lacks CONFIG_DEBUG_INFO_BTF; use --btf or --image"
		SOURCE="running kernel $(uname -r), $BTF"
	else
		fetch_debian_image
	fi
fi

if [ -n "$IMAGE" ]; then
	[ -r "$IMAGE" ] || die "cannot read $IMAGE"
	command -v python3 >/dev/null || die "python3 is needed to carve BTF out of an image"
	SOURCE=${SOURCE:-"kernel image $IMAGE"}
	step "carving BTF out of $(basename "$IMAGE")"
	python3 "$SCRIPT_DIR/extract-btf.py" "$IMAGE" -o "$TMP/vmlinux.btf"
	BTF=$TMP/vmlinux.btf
fi
[ -r "$BTF" ] || die "cannot read $BTF"
SOURCE=${SOURCE:-"BTF file $BTF"}

step "dumping types from $BTF"
mkdir -p "$TMP/inc"
HEADER=$TMP/inc/vmlinux.h
"$BPFTOOL" btf dump file "$BTF" format c >"$HEADER" ||
	die "bpftool could not dump $BTF"

# The BPF programs cannot be built without these; a header lacking them means
# the BTF came from the wrong place (a module, another arch, a stripped kernel).
REGS_STRUCT=pt_regs
[ "$ARCH" = arm64 ] && REGS_STRUCT=user_pt_regs
for t in task_struct bpf_perf_event_data "$REGS_STRUCT"; do
	grep -q "^struct $t {" "$HEADER" || die "generated header lacks struct $t"
done

if [ "$CHECK" = 1 ]; then
	command -v clang >/dev/null || die "clang not found (use --no-check to skip)"
	step "compile-testing the header for $ARCH"
	cat >"$TMP/check.bpf.c" <<'EOF'
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>

char LICENSE[] SEC("license") = "GPL";
volatile __u64 seen;

SEC("perf_event")
int check(struct bpf_perf_event_data *ctx)
{
	struct task_struct *task = (struct task_struct *)bpf_get_current_task();

	seen = BPF_CORE_READ(task, pid) + PT_REGS_IP(&ctx->regs);
	return 0;
}
EOF
	clang -g -O2 -target bpf -D__TARGET_ARCH_"$(bpf_target_arch "$ARCH")" \
		-I "$TMP/inc" -c "$TMP/check.bpf.c" -o "$TMP/check.bpf.o" ||
		die "generated header does not compile for $ARCH"
fi

mkdir -p "$(dirname "$OUTPUT")"
mv "$HEADER" "$OUTPUT"
step "wrote $OUTPUT ($(grep -c '' "$OUTPUT") lines) from $SOURCE"
