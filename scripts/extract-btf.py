#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Carve the kernel's own (base) BTF blob out of a kernel image.

We need vmlinux.h for architectures we have no machine of, and distro kernel
packages ship only a boot image, not an ELF vmlinux: arm64 vmlinuz is a raw
(sometimes gzip-compressed, sometimes EFI-zboot-wrapped) Image, and the .BTF
section's bytes sit somewhere inside it, unmarked.  So we decompress the image
and scan for a struct btf_header whose fields, and whose whole type section,
parse consistently.  The result is a plain BTF file for `bpftool btf dump`.

Usage: extract-btf.py IMAGE -o OUT.btf
IMAGE may be a raw Image, an ELF vmlinux, gzip/xz/lzma/bzip2/zstd-compressed
either of those, or an EFI zboot image.
"""

import argparse
import bz2
import gzip
import lzma
import shutil
import struct
import subprocess
import sys
import zlib

BTF_MAGIC_LE = b"\x9f\xeb"
BTF_HDR_FMT = "<HBBIIIII"  # magic version flags hdr_len type_off/len str_off/len
BTF_HDR_MIN = struct.calcsize(BTF_HDR_FMT)  # 24, the only layout so far
BTF_KIND_MAX = 19  # BTF_KIND_ENUM64, the newest kind we know how to walk

# Bytes that follow the 12-byte struct btf_type for each kind: a fixed part
# plus vlen times a per-member record.  Unknown kinds make a candidate invalid.
# kind: (fixed, per_vlen)
BTF_KIND_EXTRA = {
    1: (4, 0),  # INT: encoding word
    2: (0, 0),  # PTR
    3: (12, 0),  # ARRAY: struct btf_array
    4: (0, 12),  # STRUCT: btf_member[vlen]
    5: (0, 12),  # UNION
    6: (0, 8),  # ENUM: btf_enum[vlen]
    7: (0, 0),  # FWD
    8: (0, 0),  # TYPEDEF
    9: (0, 0),  # VOLATILE
    10: (0, 0),  # CONST
    11: (0, 0),  # RESTRICT
    12: (0, 0),  # FUNC
    13: (0, 8),  # FUNC_PROTO: btf_param[vlen]
    14: (4, 0),  # VAR: linkage
    15: (0, 12),  # DATASEC: btf_var_secinfo[vlen]
    16: (0, 0),  # FLOAT
    17: (4, 0),  # DECL_TAG: component_idx
    18: (0, 0),  # TYPE_TAG
    19: (0, 12),  # ENUM64: btf_enum64[vlen]
}


def die(msg):
    print(f"extract-btf: {msg}", file=sys.stderr)
    sys.exit(1)


def zstd_decompress(data):
    # Python grew a zstd module only in 3.14; Debian 12 has 3.11.
    zstd = shutil.which("zstd")
    if not zstd:
        die("image is zstd-compressed but the zstd tool is not installed")
    res = subprocess.run([zstd, "-dc"], input=data, capture_output=True, check=False)
    if res.returncode != 0:
        die("zstd failed: " + res.stderr.decode(errors="replace").strip())
    return res.stdout


def decompress_gzip(data):
    # A gzip member may be followed by padding or a size trailer (zboot
    # appends one), which gzip.decompress would reject as a bad member.
    return zlib.decompressobj(16 + zlib.MAX_WBITS).decompress(data)


DECOMPRESSORS = {
    "gzip": decompress_gzip,
    "xz": lambda d: lzma.LZMADecompressor(format=lzma.FORMAT_XZ).decompress(d),
    "lzma": lambda d: lzma.LZMADecompressor(format=lzma.FORMAT_ALONE).decompress(d),
    "bzip2": bz2.decompress,
    "zstd": zstd_decompress,
}


def unwrap(data):
    """Return the uncompressed kernel image, peeling known wrappers."""
    for _ in range(4):  # a zboot image holds a compressed payload: 2 levels
        if data[:2] == b"MZ" and data[4:8] == b"zimg":
            # EFI zboot header: payload offset, size, then the
            # compression name as a NUL-terminated string at 24.
            off, size = struct.unpack_from("<II", data, 8)
            comp = data[24:56].split(b"\0", 1)[0].decode("ascii", "replace")
            if comp not in DECOMPRESSORS:
                die(f"EFI zboot image compressed with unsupported '{comp}'")
            data = DECOMPRESSORS[comp](data[off:off + size])
        elif data[:2] == b"\x1f\x8b":
            data = DECOMPRESSORS["gzip"](data)
        elif data[:6] == b"\xfd7zXZ\x00":
            data = DECOMPRESSORS["xz"](data)
        elif data[:3] == b"BZh":
            data = DECOMPRESSORS["bzip2"](data)
        elif data[:4] == b"\x28\xb5\x2f\xfd":
            data = DECOMPRESSORS["zstd"](data)
        elif data[:3] == b"\x5d\x00\x00":
            data = DECOMPRESSORS["lzma"](data)
        else:
            return data
    return data


def types_parse(data, start, length, str_len):
    """True if [start, start+length) is a whole number of valid btf_type
    records whose names point into the string section.  This is what makes
    a random 0xeb9f in machine code or data not pass as BTF."""
    pos, end, ntypes = start, start + length, 0
    while pos < end:
        if pos + 12 > end:
            return False, 0
        name_off, info = struct.unpack_from("<II", data, pos)
        kind = (info >> 24) & 0x1F
        vlen = info & 0xFFFF
        if kind == 0 or kind > BTF_KIND_MAX or name_off >= str_len:
            return False, 0
        fixed, per = BTF_KIND_EXTRA[kind]
        pos += 12 + fixed + per * vlen
        ntypes += 1
    return pos == end and ntypes > 0, ntypes


def candidates(data):
    """Yield (offset, total_size, ntypes) for every plausible BTF blob."""
    pos = data.find(BTF_MAGIC_LE)
    while pos >= 0:
        if pos + BTF_HDR_MIN <= len(data):
            (_, version, flags, hdr_len, type_off, type_len, str_off,
             str_len) = struct.unpack_from(BTF_HDR_FMT, data, pos)
            strs = pos + hdr_len + str_off
            total = hdr_len + str_off + str_len
            if (version == 1 and flags == 0 and hdr_len == BTF_HDR_MIN and
                type_off == 0 and type_len > 0 and type_len % 4 == 0 and
                str_off == type_len and str_len > 1 and
                pos + total <= len(data) and data[strs] == 0 and
                data[strs + str_len - 1] == 0):
                ok, ntypes = types_parse(data, pos + hdr_len, type_len, str_len)
                if ok:
                    yield pos, total, ntypes
        pos = data.find(BTF_MAGIC_LE, pos + 1)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("image", help="kernel image (vmlinuz, Image, vmlinux)")
    ap.add_argument("-o", "--output", required=True, help="BTF file to write")
    args = ap.parse_args()

    try:
        with open(args.image, "rb") as f:
            raw = f.read()
    except OSError as e:
        die(f"cannot read {args.image}: {e.strerror}")
    try:
        data = unwrap(raw)
    except (OSError, EOFError, lzma.LZMAError, zlib.error, ValueError) as e:
        die(f"cannot decompress {args.image}: {e}")

    found = list(candidates(data))
    if not found:
        die(f"no BTF blob found in {args.image} "
            f"({len(data)} bytes after decompression); "
            "was the kernel built with CONFIG_DEBUG_INFO_BTF=y?")
    # vmlinux BTF dwarfs anything else that could look like BTF (a
    # builtin module never carries its own), so the largest one wins.
    off, size, ntypes = max(found, key=lambda c: c[1])
    if len(found) > 1:
        print(f"extract-btf: {len(found)} candidates, using the largest",
              file=sys.stderr)
    try:
        with open(args.output, "wb") as f:
            f.write(data[off:off + size])
    except OSError as e:
        die(f"cannot write {args.output}: {e.strerror}")
    print(f"extract-btf: {ntypes} types, {size} bytes at offset {off:#x} "
          f"-> {args.output}", file=sys.stderr)


if __name__ == "__main__":
    main()
