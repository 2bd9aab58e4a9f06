"""Safe access to files we did not write: regular files only, bounded reads, change detection.

Reading a memory map past the end of a file that shrank after it was mapped (a download still
being written, a file truncated or rewritten in place) kills the process with SIGBUS; Python
cannot catch that. So every read of a mapped matrix is preceded by `check_mapped`, which asks
the kernel for the mapped file's current size (one fstat on the map's own descriptor, so a
file replaced by rename is still judged by the inode that is actually mapped). Long scans call
it between blocks. `FileStamp` notices any change by path (size, mtime, inode) for callers that
want to offer a reopen.
"""

from __future__ import annotations

import mmap
import os
import signal
import stat
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

import numpy as np

from explorer.core.errors import ModelChangedError, ModelFormatError

try:
    import fcntl
except ImportError:  # Windows: a mapped file cannot be truncated there at all
    fcntl = None  # type: ignore[assignment]

_KINDS = {
    stat.S_IFIFO: "a FIFO (named pipe)",
    stat.S_IFCHR: "a character device",
    stat.S_IFBLK: "a block device",
    stat.S_IFSOCK: "a socket",
    stat.S_IFDIR: "a folder",
}


def _kind(mode: int) -> str:
    return _KINDS.get(stat.S_IFMT(mode), "not a regular file")


def check_regular(path: str | Path) -> Path:
    """`path` if it names a regular file (symlinks followed); else one clear ModelFormatError.

    Only stats the path: nothing is opened, so a FIFO cannot block.
    """
    path = Path(path)
    try:
        mode = os.stat(path).st_mode
    except OSError as e:
        if os.path.islink(path):
            raise ModelFormatError(f"{path.name}: is a dangling symbolic link") from None
        raise ModelFormatError(f"{path.name}: cannot read ({e.strerror or e})") from None
    if not stat.S_ISREG(mode):
        raise ModelFormatError(f"{path.name}: cannot read: it is {_kind(mode)}, not a regular file")
    return path


def open_regular(path: str | Path) -> BinaryIO:
    """Open `path` read-only; refuse anything that is not a regular file without blocking.

    O_NONBLOCK makes opening a FIFO return at once (plain open() waits for a writer forever).
    """
    path = Path(path)
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except OSError as e:
        raise ModelFormatError(f"{path.name}: cannot read ({e.strerror or e})") from None
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            raise ModelFormatError(
                f"{path.name}: cannot read: it is {_kind(mode)}, not a regular file"
            )
        os.set_blocking(fd, True)
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


def read_limited(path: str | Path, limit: int) -> bytes:
    """The whole of a regular file of at most `limit` bytes."""
    path = Path(path)
    with open_regular(path) as f:
        size = os.fstat(f.fileno()).st_size
        if size > limit:
            raise ModelFormatError(
                f"{path.name}: is {size / 2**20:.1f} MB; the limit for this kind of file is "
                f"{_megabytes(limit)}"
            )
        try:
            data = f.read(limit + 1)
        except OSError as e:
            raise ModelFormatError(f"{path.name}: cannot read ({e.strerror or e})") from None
    if len(data) > limit:  # grew while we read it
        raise ModelFormatError(f"{path.name}: grew past {_megabytes(limit)} while being read")
    return data


def _megabytes(n: int) -> str:
    return f"{n / 2**20:.0f} MB" if n >= 2**20 else f"{n:,} bytes"


def check_size(path: str | Path, limit: int, what: str = "this kind of file") -> Path:
    """`path` if it is a regular file of at most `limit` bytes (for files a library opens)."""
    path = check_regular(path)
    size = os.stat(path).st_size
    if size > limit:
        raise ModelFormatError(
            f"{path.name}: is {size / 2**20:.1f} MB; the limit for {what} is {_megabytes(limit)}"
        )
    return path


def read_stream(stream: BinaryIO, limit: int, name: str) -> bytes:
    """At most `limit` bytes of a stream (stdin, a pipe), read in bounded chunks; a stream
    that goes on past the limit is refused after reading `limit` + 1 bytes."""
    chunks: list[bytes] = []
    total = 0
    while total <= limit:
        chunk = stream.read(min(1 << 20, limit + 1 - total))
        if not chunk:
            return b"".join(chunks)
        chunks.append(chunk)
        total += len(chunk)
    raise ModelFormatError(f"{name}: goes on past {_megabytes(limit)}, the limit for it")


def _changed(name: str, detail: str) -> ModelChangedError:
    return ModelChangedError(
        f"{name}: model file changed on disk while reading ({detail}); reopen it"
    )


def mapped_base(array: np.ndarray) -> np.memmap | None:
    """The np.memmap that `array` is (or views), holding the map; None if it views none."""
    base: object = array
    while base is not None and not isinstance(getattr(base, "_mmap", None), mmap.mmap):
        base = getattr(base, "base", None)
    return base  # type: ignore[return-value]  # np.memmap is the class that keeps a _mmap


def check_mapped(array: np.ndarray) -> None:
    """Raise ModelChangedError if reading `array` (a np.memmap or a view of one) could fault.

    Arrays that are not memory maps pass at once.
    """
    base = mapped_base(array)
    if base is None:
        return
    mm: mmap.mmap = base._mmap  # type: ignore[attr-defined]
    offset = int(getattr(base, "offset", 0))
    needed = offset - offset % mmap.ALLOCATIONGRANULARITY + len(mm)
    name = Path(str(getattr(base, "filename", None) or "model file")).name
    try:
        size = mm.size()  # fstat of the mapped file itself
    except (OSError, ValueError) as e:  # ValueError: the map was closed
        raise _changed(name, f"cannot check it: {e}") from None
    if size < needed:
        raise _changed(name, f"now {size:,} bytes, the tensor ends at byte {needed:,}")


# Linux file leases (fcntl(2)): constants the fcntl module may not name.
_F_SETSIG = getattr(fcntl, "F_SETSIG", 10)
_F_SETLEASE = getattr(fcntl, "F_SETLEASE", 1024)
_F_GETLEASE = getattr(fcntl, "F_GETLEASE", 1025)
_SAFE_SCANS = fcntl is not None and hasattr(os, "preadv")
_PREAD_BYTES = 32 << 20  # a block read with pread: few kernel launches, one buffer


class MappedScan:
    """Blocks of rows of a mapped matrix for a scan that a truncation cannot turn into SIGBUS.

    A check before each block is not enough: the file can shrink while a kernel is inside the
    block, and a fault in a memory map kills the process. Two strategies, chosen at start:

    - A read lease on the file (Linux; the user owns the file and nobody has it open for
      writing): the kernel then holds any truncate or open-for-writing by another process
      until the lease is released, and reports the pending break. `rows` reads the map as
      usual (full speed) and, before each block, raises ModelChangedError if a writer is
      waiting; the scan stops, the lease is released and the writer goes on.
    - Otherwise, each block is read with pread into one reusable buffer: a file that shrank
      gives a short read, which is an error, never a fault.

    Arrays that are not file maps (decoded, generated) are read as they are.
    """

    def __init__(self, array: np.ndarray):
        self.array = array
        self.fd = -1
        self.leased = False
        self.row_bytes = 0
        self._buf: np.ndarray | None = None
        base = mapped_base(array)
        row_bytes = array.dtype.itemsize * int(np.prod(array.shape[1:], dtype=np.int64))
        contiguous = (
            array.ndim >= 1
            and array[:1].flags.c_contiguous
            and (array.shape[0] <= 1 or array.strides[0] == row_bytes)
        )
        self.name = Path(str(getattr(base, "filename", None) or "model file")).name
        if base is None or not contiguous or not row_bytes or not _SAFE_SCANS:
            return
        self.row_bytes = row_bytes
        start = array.__array_interface__["data"][0] - base.__array_interface__["data"][0]
        self.offset = int(getattr(base, "offset", 0)) + start
        try:
            self.fd = os.open(
                str(base.filename), os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0)
            )
        except OSError as e:
            raise _changed(self.name, f"cannot open it again: {e.strerror or e}") from None
        try:
            # SIGURG is ignored by default: the break is polled, never delivered as SIGIO,
            # whose default action would end the process.
            fcntl.fcntl(self.fd, _F_SETSIG, signal.SIGURG)
            fcntl.fcntl(self.fd, _F_SETLEASE, fcntl.F_RDLCK)
            self.leased = True
        except OSError:  # not the owner, a writer has it open, no leases here
            pass

    def __enter__(self) -> MappedScan:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        if self.fd >= 0:
            if self.leased:
                try:
                    fcntl.fcntl(self.fd, _F_SETLEASE, fcntl.F_UNLCK)
                except OSError:
                    pass
            os.close(self.fd)
            self.fd = -1

    def step(self, rows: int) -> int:
        """Rows per block for a scan that would take `rows`: fewer when read with pread, so
        that the one buffer stays small (and in cache) and is not faulted in anew each scan."""
        if self.fd < 0 or self.leased:
            return rows
        return max(1, min(rows, _PREAD_BYTES // self.row_bytes))

    def check(self) -> None:
        """Raise ModelChangedError if another program is waiting to write or truncate."""
        if self.leased and fcntl.fcntl(self.fd, _F_GETLEASE) != fcntl.F_RDLCK:
            raise _changed(self.name, "another program is writing or truncating it")
        check_mapped(self.array)

    def rows(self, start: int, stop: int) -> np.ndarray:
        """Stored rows [start, stop): a view of the map (leased) or a copy read with pread."""
        self.check()
        if self.fd < 0 or self.leased:
            return self.array[start:stop]
        n = (stop - start) * self.row_bytes
        if self._buf is None or len(self._buf) < n:
            self._buf = np.empty(n, np.uint8)
        view = memoryview(self._buf)[:n]  # type: ignore[arg-type]
        got = 0
        while got < n:
            k = os.preadv(self.fd, [view[got:]], self.offset + start * self.row_bytes + got)
            if k <= 0:
                raise _changed(self.name, "it ended before the rows being read")
            got += k
        out = np.frombuffer(view, dtype=self.array.dtype)
        return out.reshape((stop - start, *self.array.shape[1:]))


@dataclass(frozen=True)
class FileStamp:
    """Size, modification time and identity of a file when it was opened."""

    path: Path
    size: int
    mtime_ns: int
    inode: int
    device: int

    @classmethod
    def of_fd(cls, path: str | Path, fd: int) -> FileStamp:
        st = os.fstat(fd)
        return cls(Path(path), st.st_size, st.st_mtime_ns, st.st_ino, st.st_dev)

    def change(self) -> str | None:
        """What changed since the stamp was taken (None: nothing)."""
        try:
            st = os.stat(self.path)
        except OSError as e:
            return f"it can no longer be read: {e.strerror or e}"
        if (st.st_ino, st.st_dev) != (self.inode, self.device):
            return "it was replaced by another file"
        if st.st_size != self.size:
            return f"its size went from {self.size:,} to {st.st_size:,} bytes"
        if st.st_mtime_ns != self.mtime_ns:
            return "it was modified"
        return None


def first_change(handles: Iterable[object]) -> str | None:
    """'name: what changed' for the first opened file that changed on disk, else None.

    `handles` are open format readers; each may carry a `stamp` (FileStamp) taken at open.
    """
    for handle in handles:
        stamp = getattr(handle, "stamp", None)
        if isinstance(stamp, FileStamp):
            detail = stamp.change()
            if detail is not None:
                return f"{stamp.path.name}: {detail}"
    return None
