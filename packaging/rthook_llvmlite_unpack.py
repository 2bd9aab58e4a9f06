# PyInstaller runtime hook: LLVM (llvmlite/binding/libllvmlite.so, 160 MB stripped, every LLVM
# target) travels xz-compressed (about 30 MB; packaging/build.sh packs it). The first time anything
# imports llvmlite's binding (numba: search kernels, UMAP), the library is unpacked once into the
# user cache folder and loaded from there; the numba-free commands never pay for it, and the
# window loads numba on a worker after its first frame.
import contextlib
import importlib.abc
import importlib.util
import lzma
import os
import sys

_BINDING = os.path.join(getattr(sys, "_MEIPASS", ""), "llvmlite", "binding")
_PACKED = os.path.join(_BINDING, "libllvmlite.so.xz")
_NAME = "libllvmlite.so"


def _target() -> tuple[str, bool]:
    """Path of the unpacked library in the user cache folder, and whether it is there."""
    from platformdirs import user_cache_dir

    with open(_PACKED + ".id", encoding="ascii") as f:
        ident, size = f.read().split()  # content hash and size, written by build.sh
    target = os.path.join(user_cache_dir("embedding-explorer"), "llvmlite", ident, _NAME)
    return target, os.path.isfile(target) and os.path.getsize(target) == int(size)


def _unpacked_library() -> str:
    """Path of the unpacked library, unpacking it when it is missing."""
    target, present = _target()
    if present:
        return target
    os.makedirs(os.path.dirname(target), exist_ok=True)
    part = f"{target}.{os.getpid()}.part"  # two first launches at once must not share a file
    try:
        with lzma.open(_PACKED) as src, open(part, "wb") as dst:
            while chunk := src.read(1 << 22):
                dst.write(chunk)
        os.chmod(part, 0o755)
        os.replace(part, target)
    finally:
        if os.path.exists(part):
            os.remove(part)
    return target


def _patch(ffi) -> None:
    original = ffi._importlib_resources_path

    def resource_path(package, resource):
        if resource == _NAME:
            return contextlib.nullcontext(_unpacked_library())
        return original(package, resource)

    ffi._importlib_resources_path = resource_path


class _PatchingLoader(importlib.abc.Loader):
    def __init__(self, inner):
        self._inner = inner

    def create_module(self, spec):
        return self._inner.create_module(spec)

    def exec_module(self, module):
        self._inner.exec_module(module)
        _patch(module)


class _FfiFinder(importlib.abc.MetaPathFinder):
    def find_spec(self, fullname, path, target=None):
        if fullname != "llvmlite.binding.ffi":
            return None
        sys.meta_path.remove(self)
        spec = importlib.util.find_spec(fullname)
        if spec is not None and spec.loader is not None:
            spec.loader = _PatchingLoader(spec.loader)
        return spec


if os.path.isfile(_PACKED):  # an unpacked library (a build without packing) needs nothing
    sys.meta_path.insert(0, _FfiFinder())
