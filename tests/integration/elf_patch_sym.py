#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""elf_patch_sym.py FILE SYMBOL VALUE: writes the int32 VALUE over what the
dynamic symbol SYMBOL of the ELF64 little-endian FILE holds (in the file,
through its section's offset). For tests that fake a runtime's metadata."""
import struct
import sys


def main():
    path, name, value = sys.argv[1], sys.argv[2].encode(), int(sys.argv[3], 0)
    with open(path, "r+b") as f:
        data = f.read()
        shoff, = struct.unpack_from("<Q", data, 0x28)
        shentsize, shnum = struct.unpack_from("<HH", data, 0x3A)
        secs = [struct.unpack_from("<IIQQQQIIQQ", data, shoff + i * shentsize) for i in range(shnum)]
        for sec in secs:
            if sec[1] != 11:  # SHT_DYNSYM
                continue
            strtab = secs[sec[6]]
            for off in range(sec[4], sec[4] + sec[5], 24):
                st_name, _, _, st_shndx, st_value, _ = struct.unpack_from("<IBBHQQ", data, off)
                start = strtab[4] + st_name
                if data[start:data.index(b"\0", start)] != name:
                    continue
                target = secs[st_shndx]
                f.seek(target[4] + st_value - target[3])
                f.write(struct.pack("<i", value))
                return 0
    print(f"elf_patch_sym: no {sys.argv[2]} in {path}", file=sys.stderr)
    return 1


if __name__ == "__main__":
    sys.exit(main())
