"""Strip the symbol tables of every shared library in the frozen app, keeping only safe results.

    python packaging/strip_libs.py dist/embedding-explorer

`strip --strip-unneeded` on a library that auditwheel rewrote with patchelf (OpenBLAS in numpy.libs,
for one) can leave a loadable segment whose file offset and address disagree modulo the page
size; the loader then refuses it ("ELF load command address/offset not page-aligned"). Each
library is stripped into a copy, the copy's program headers are checked for exactly that, and the
original is kept when the check fails. Prints the bytes saved and the libraries left as they were.

Then identical libraries that two wheels both vendor (numpy.libs and scipy.libs carry the same
libgfortran and libquadmath) are kept once: the second copy becomes a relative symlink.
"""

import filecmp
import os
import shutil
import struct
import subprocess
import sys
from pathlib import Path

PAGE = 4096
PT_LOAD = 1


def load_segments_aligned(path: Path) -> bool:
    """True when every PT_LOAD segment satisfies offset == address (mod page size)."""
    data = path.read_bytes()
    if data[:4] != b"\x7fELF" or data[4] != 2 or data[5] != 1:  # ELF64 little-endian only
        return False
    (phoff,) = struct.unpack_from("<Q", data, 0x20)
    phentsize, phnum = struct.unpack_from("<HH", data, 0x36)
    for i in range(phnum):
        p_type, _flags, p_offset, p_vaddr = struct.unpack_from("<IIQQ", data, phoff + i * phentsize)
        if p_type == PT_LOAD and (p_vaddr - p_offset) % PAGE:
            return False
    return True


def is_elf(path: Path) -> bool:
    with path.open("rb") as f:
        return f.read(4) == b"\x7fELF"


def strip_one(path: Path) -> int | None:
    """Bytes saved, or None when the stripped copy would not load (original kept)."""
    tmp = path.with_name(path.name + ".stripping")
    shutil.copy2(path, tmp)
    try:
        done = subprocess.run(["strip", "--strip-unneeded", str(tmp)], capture_output=True)
        if done.returncode != 0 or not load_segments_aligned(tmp):
            return None
        saved = path.stat().st_size - tmp.stat().st_size
        os.replace(tmp, path)
        return saved
    finally:
        tmp.unlink(missing_ok=True)


def dedupe(folder: Path) -> int:
    """Replace byte-identical libraries of the same name by symlinks to the first; bytes saved."""
    first: dict[tuple[str, int], Path] = {}
    saved = 0
    for path in sorted(folder.rglob("*.so*")):
        if path.is_symlink() or not path.is_file():
            continue
        key = (path.name, path.stat().st_size)
        if key not in first:
            first[key] = path
        elif filecmp.cmp(first[key], path, shallow=False):
            saved += path.stat().st_size
            path.unlink()
            path.symlink_to(os.path.relpath(first[key], path.parent))
    return saved


def main(folder: str) -> None:
    saved, kept = 0, []
    for path in sorted(Path(folder).rglob("*.so*")):
        if path.is_symlink() or not path.is_file() or not is_elf(path):
            continue
        result = strip_one(path)
        if result is None:
            kept.append(path.name)
        else:
            saved += result
    print(f"strip: {saved / 1e6:.1f} MB saved; left unstripped (would not load): {', '.join(kept)}")
    print(f"identical libraries kept once: {dedupe(Path(folder)) / 1e6:.1f} MB saved")


if __name__ == "__main__":
    main(sys.argv[1])
