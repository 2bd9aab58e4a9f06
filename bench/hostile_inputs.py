"""A hostile-input run over the surfaces of issue 40: every case through the real command line.

    python bench/hostile_inputs.py            # all cases (a few minutes on a loaded machine)
    python bench/hostile_inputs.py -k cache   # the cases whose name holds "cache"

Each case runs `python -m explorer …` in a fresh process with its own cache folder and checks
the contract: exit 0, or exit 2 with one `error:` line on stderr; no traceback, no signal
(SIGBUS, SIGSEGV), no hang (a time limit), peak memory under a bound (from wait4), and, where
the answer is known, the right answer (a corrupted cache must give the same neighbours as the
exact scan). Prints one line per case and a summary; exit status 1 if any case broke it.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import shutil
import signal
import struct
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from explorer.core.resources import demo_model_dir  # noqa: E402
from tests.support.models import write_arrays, write_gguf, write_model  # noqa: E402
from tests.support.stores import make_hf_cache  # noqa: E402

TENSOR = "model.embed_tokens.weight"
LIMIT_S = 300
MAX_RSS_MB = 1500
GB = 1 << 30


# Runs the command as its own child and writes that child's peak RSS (KiB) to argv[1]: measured
# from here, every case would report this script's own size (Linux keeps the larger of the
# forked parent's and the command's peak across exec).
LAUNCH = """
import os, signal, sys
pid = os.fork()
if pid == 0:
    os.execv(sys.argv[2], sys.argv[2:])
_, status, usage = os.wait4(pid, 0)
with open(sys.argv[1], "w") as f:
    f.write(str(usage.ru_maxrss))
if os.WIFSIGNALED(status):
    signal.signal(os.WTERMSIG(status), signal.SIG_DFL)
    os.kill(os.getpid(), os.WTERMSIG(status))
sys.exit(os.WEXITSTATUS(status))
"""


@dataclass
class Case:
    name: str
    argv: list[str]
    setup: Callable[[Path], None] = lambda work: None
    expect: str = "0|2"  # allowed exit codes
    stdin: str | None = None  # a path opened as the child's stdin
    check: Callable[[str, str], str | None] | None = None  # stdout, stderr -> problem
    during: Callable[[Path], None] | None = None  # run beside the child (e.g. truncate)
    env: dict = field(default_factory=dict)


def run(case: Case, work: Path) -> tuple[bool, str]:
    env = dict(os.environ, PYTHONPATH=str(ROOT), XDG_CACHE_HOME=str(work / "xdg"))
    env.update(HOME=str(work / "home"), HF_HUB_CACHE=str(work / "hf"))
    env.update(OLLAMA_MODELS=str(work / "ollama"), **case.env)
    argv = [a.replace("{work}", str(work)) for a in case.argv]
    stdin = open(case.stdin, "rb") if case.stdin else subprocess.DEVNULL
    t0 = time.perf_counter()
    peak_file = work / "peak-rss"
    child = subprocess.Popen(
        [sys.executable, "-c", LAUNCH, str(peak_file), sys.executable, "-m", "explorer", *argv],
        stdin=stdin,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env,
        cwd=work,
        start_new_session=True,  # the time limit ends the launcher and the command together
    )
    streams: dict[str, bytes] = {}

    def drain(name: str, pipe) -> None:
        streams[name] = pipe.read()

    readers = [
        threading.Thread(target=drain, args=("out", child.stdout)),
        threading.Thread(target=drain, args=("err", child.stderr)),
    ]
    for r in readers:
        r.start()
    side = threading.Thread(target=case.during, args=(work,)) if case.during else None
    if side:
        side.start()
    timer = threading.Timer(LIMIT_S, os.killpg, args=(child.pid, signal.SIGKILL))
    timer.start()
    code = child.wait()
    timer.cancel()
    for r in readers:
        r.join()
    if side:
        side.join(120)
    if stdin is not subprocess.DEVNULL:
        stdin.close()
    seconds = time.perf_counter() - t0
    out = streams.get("out", b"").decode("utf-8", "replace")
    err = streams.get("err", b"").decode("utf-8", "replace")
    rss = int(peak_file.read_text()) / 1024 if peak_file.exists() else float("nan")
    problems = []
    if code < 0:
        problems.append(f"killed by {signal.Signals(-code).name}")
    elif str(code) not in case.expect.split("|"):
        problems.append(f"exit {code}")
    if "Traceback" in err:
        problems.append("traceback")
    if code == 2 and len([ln for ln in err.splitlines() if ln.strip()]) != 1:
        problems.append(f"{len(err.splitlines())} stderr lines")
    if seconds >= LIMIT_S - 1:
        problems.append("hung")
    if rss > MAX_RSS_MB:
        problems.append(f"{rss:.0f} MB peak")
    if case.check and not problems:
        found = case.check(out, err)
        if found:
            problems.append(found)
    lines = err.splitlines()
    said = ([ln for ln in lines if "error:" in ln or ln.startswith("note:")] or ["(no message)"])[0]
    line = f"{'ok ' if not problems else 'BAD'} {case.name:<44} exit {code:>3} {seconds:5.1f} s"
    line += f" {rss:6.0f} MB  {said[:110]}"
    if problems:
        line += f"  <-- {', '.join(problems)}"
    return not problems, line


# -- fixtures ------------------------------------------------------------------------------------


def fifo(path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    if path.exists() or path.is_symlink():
        path.unlink()
    os.mkfifo(path)


def sparse(path: Path, size: int = GB) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "wb") as f:
        f.truncate(size)


def cache_entry(work: Path, kind: str) -> Path:
    root = work / "xdg" / "embedding-explorer" / kind
    return next(p for p in root.iterdir() if p.is_dir() and not p.name.startswith("tmp-"))


def forge_meta(folder: Path) -> None:
    meta = json.loads((folder / "meta.json").read_text())
    for p in folder.glob("*.npy"):
        with open(p, "rb") as f:
            np.lib.format.read_magic(f)
            shape, _, dtype = np.lib.format.read_array_header_1_0(f)
        digest = hashlib.sha256(p.read_bytes()).hexdigest()
        meta["arrays"][p.stem] = {"dtype": dtype.str, "shape": list(shape), "sha256": digest}
    (folder / "meta.json").write_text(json.dumps(meta))


def corrupt(kind: str, how: str, array: str) -> Callable[[Path], None]:
    """Damage the app's cache entry of `kind`; "forged …" also rewrites its checksums."""

    def apply(work: Path) -> None:
        folder = cache_entry(work, kind)
        p = folder / f"{array}.npy"
        damage = how.removeprefix("forged ")
        if damage == "zeroed":
            np.save(p, np.zeros_like(np.load(p)))
        elif damage == "reversed":
            np.save(p, np.load(p)[::-1].copy())
        elif damage == "truncated":
            p.write_bytes(p.read_bytes()[: p.stat().st_size // 2])
        elif damage == "nan":
            a = np.load(p)
            a = a.astype(np.float64) if a.dtype.kind != "f" else a.copy()
            a.reshape(-1)[0] = np.nan
            np.save(p, a)
        elif damage == "2-D":
            a = np.load(p)
            np.save(p, np.stack([a, a]))
        elif damage == "meta":
            (folder / "meta.json").write_bytes(b"\x00garbage")
        elif damage == "fifo":
            fifo(p)
        elif damage == "settings":
            meta = json.loads((folder / "meta.json").read_text())
            meta["extra"]["stats"]["settings"] = {"cosine": [-5, -5], "dot": [-5, -5]}
            (folder / "meta.json").write_text(json.dumps(meta))
        if how.startswith("forged "):
            forge_meta(folder)

    return apply


def same_neighbors_as(reference: dict) -> Callable[[str, str], str | None]:
    def check(out: str, err: str) -> str | None:
        try:
            ids = [r["id"] for r in json.loads(out)]
        except (ValueError, KeyError, TypeError):
            return "no JSON answer"
        return None if ids == reference["ids"] else f"wrong neighbours {ids[:5]}…"

    return check


def nested_gguf(path: Path, depth: int = 5000) -> None:
    key = b"general.deep"
    body = struct.pack("<I", 9) + struct.pack("<IQ", 9, 1) * depth + struct.pack("<IQ", 4, 0)
    head = b"GGUF" + struct.pack("<IQQ", 3, 0, 1) + struct.pack("<Q", len(key)) + key
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(head + body + bytes(64))


def build_cases(base: Path) -> list[Case]:
    demo = str(demo_model_dir())
    small = base / "small"
    write_model(small, rows=2000, dim=32, dtype="BF16", tokenizer="wordpiece")
    big = base / "big"
    write_model(big, rows=1_200_000, dim=128, dtype="BF16")  # 300 MB: three scan blocks
    for name, values in (
        ("zeros", np.zeros((300, 16), np.float32)),
        ("same", np.ones((300, 16), np.float32)),
        ("huge", np.full((300, 16), 3e38, np.float32) * np.where(np.arange(16) % 2, 1, -1)),
    ):
        (base / name).mkdir()
        write_arrays(base / name / "model.safetensors", {TENSOR: values.astype(np.float32)})
    write_gguf(
        base / "zero-cols.gguf", {"token_embd.weight": (np.zeros((10**8, 0), np.float32), "F32")}
    )
    nested_gguf(base / "deep.gguf")
    # tokenizer side files
    vj = base / "vocab-json"
    write_model(vj, rows=8, dim=4)
    (vj / "vocab.json").write_text(json.dumps({"a": 0, "b": 1, "ab": 10**12}))
    (vj / "merges.txt").write_text("#version: 0.2\na b\n")
    spm = base / "spm"
    write_model(spm, rows=8, dim=4)
    sparse(spm / "tokenizer.model", 64 << 20)
    cfg = base / "cfg"
    write_model(cfg, rows=8, dim=4)
    (cfg / "vocab.txt").write_text("\n".join(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "a", "b"]))
    sparse(cfg / "tokenizer_config.json")
    sparse(cfg / "config.json")
    nounk = base / "nounk"
    nounk.mkdir()
    from tokenizers import Tokenizer, models, pre_tokenizers

    tok = Tokenizer(
        models.WordPiece(vocab={w: i for i, w in enumerate(["the", "a"])}, unk_token="[UNK]")
    )
    tok.pre_tokenizer = pre_tokenizers.Whitespace()
    tok.save(str(nounk / "tokenizer.json"))
    write_arrays(nounk / "model.safetensors", {TENSOR: np.ones((2, 4), np.float32)})
    fifo_folder = base / "fifo-folder"
    fifo(fifo_folder / "model.gguf")
    sparse(base / "big.txt")

    def exact_answer(model: str, token: str) -> dict:
        env = dict(os.environ, PYTHONPATH=str(ROOT), XDG_CACHE_HOME=str(base / "xdg-ref"))
        argv = ["neighbors", "-m", model, "--id", token, "--exact", "--json"]
        out = subprocess.run(
            [sys.executable, "-m", "explorer", *argv], capture_output=True, env=env, check=True
        )
        return {"ids": [r["id"] for r in json.loads(out.stdout)]}

    demo_ref = exact_answer(demo, "2307")

    def with_index(extra: Callable[[Path], None]) -> Callable[[Path], None]:
        def setup(work: Path) -> None:
            shutil.copytree(base / "xdg-index", work / "xdg")
            extra(work)

        return setup

    def with_stats(extra: Callable[[Path], None]) -> Callable[[Path], None]:
        def setup(work: Path) -> None:
            shutil.copytree(base / "xdg-stats", work / "xdg")
            extra(work)

        return setup

    env = dict(os.environ, PYTHONPATH=str(ROOT), XDG_CACHE_HOME=str(base / "xdg-index"))
    subprocess.run(
        [sys.executable, "-m", "explorer", "index", "-m", demo],
        env=env,
        check=True,
        capture_output=True,
    )
    env["XDG_CACHE_HOME"] = str(base / "xdg-stats")
    subprocess.run(
        [sys.executable, "-m", "explorer", "stats", "-m", str(small)],
        env=env,
        check=True,
        capture_output=True,
    )

    fast = ["neighbors", "-m", demo, "--id", "2307", "--fast", "--json"]
    cases = []
    for how, array in (
        ("zeroed", "codes"),
        ("forged zeroed", "codes"),
        ("reversed", "sq"),
        ("forged reversed", "sq"),
        ("truncated", "codes"),
        ("forged 2-D", "sq"),
        ("forged nan", "u"),
        ("meta", "codes"),
        ("fifo", "codes"),
        ("settings", "codes"),
    ):
        cases.append(
            Case(
                f"cache: fast index {how} {array}",
                fast,
                with_index(corrupt("neighbors-index", how, array)),
                expect="0",
                check=same_neighbors_as(demo_ref),
            )
        )
    for how, array in (
        ("reversed", "sq"),
        ("truncated", "sq"),
        ("nan", "mean"),
        ("forged nan", "mean"),
        ("2-D", "sq"),
        ("meta", "sq"),
        ("fifo", "sq"),
    ):
        cases.append(
            Case(
                f"cache: stats {how} {array}",
                ["stats", "-m", str(small), "--json"],
                with_stats(corrupt("stats", how, array)),
                expect="0",
            )
        )

    def truncate_mid_scan(work: Path) -> None:
        """Truncate once the scan holds its read lease (listed in /proc/locks), i.e. while it
        reads; else (no lease granted here) after a while."""
        target = work / "big" / "model.safetensors"
        inode = f":{target.stat().st_ino} "
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            with open("/proc/locks") as f:
                if any("LEASE" in line and inode in line for line in f):
                    break
            time.sleep(0.001)
        os.truncate(target, target.stat().st_size // 3)

    def copy_big(work: Path) -> None:
        shutil.copytree(big, work / "big")

    cases += [
        Case("files: FIFO model.gguf in a folder", ["info", "-m", str(fifo_folder)], expect="2"),
        Case(
            "files: GGUF with 0 columns", ["info", "-m", str(base / "zero-cols.gguf")], expect="2"
        ),
        Case("files: GGUF nested arrays", ["info", "-m", str(base / "deep.gguf")], expect="2"),
        Case("files: vocab.json id 10^12", ["info", "-m", str(vj)], expect="2"),
        Case("files: 64 MB tokenizer.model of zeros", ["info", "-m", str(spm)], expect="2"),
        Case("files: 1 GB tokenizer_config + config.json", ["info", "-m", str(cfg)], expect="0|2"),
        Case(
            "stream: tokenize --file FIFO",
            ["tokenize", "-m", str(small), "--file", str(base / "fifo-folder" / "model.gguf")],
            expect="2",
        ),
        Case(
            "stream: tokenize --file /dev/zero",
            ["tokenize", "-m", str(small), "--file", "/dev/zero"],
            expect="2",
        ),
        Case(
            "stream: tokenize --file 1 GB sparse",
            ["tokenize", "-m", str(small), "--file", str(base / "big.txt")],
            expect="2",
        ),
        Case(
            "stream: tokenize --file - endless",
            ["tokenize", "-m", str(small), "--file", "-"],
            expect="2",
            stdin="/dev/zero",
        ),
        Case(
            "stream: learn --corpus /dev/zero",
            ["learn", "-m", str(small), "--corpus", "/dev/zero", "--no-png", "--out", "{work}/o"],
            expect="2",
        ),
        Case(
            "stream: learn --corpus 1 GB sparse",
            [
                "learn",
                "-m",
                str(small),
                "--corpus",
                str(base / "big.txt"),
                "--no-png",
                "--out",
                "{work}/o",
            ],
            expect="2",
        ),
        Case(
            "values: learn --seed -1",
            ["learn", "--seed", "-1", "--no-png", "--out", "{work}/o"],
            expect="2",
        ),
        Case(
            "values: learn WordPiece without [UNK]",
            ["learn", "-m", str(nounk), "--no-png", "--epochs", "1", "--out", "{work}/o"],
            expect="2",
        ),
        Case("values: stats near 3e38", ["stats", "-m", str(base / "huge")], expect="0"),
        Case(
            "values: project --sample all-zero rows",
            ["project", "-m", str(base / "zeros"), "--sample", "100", "--out", "{work}/z.png"],
            expect="0|2",
        ),
        Case(
            "values: project --sample identical rows",
            ["project", "-m", str(base / "same"), "--sample", "100", "--out", "{work}/s.png"],
            expect="0|2",
        ),
        Case(
            "sigbus: stats --no-cache, file truncated",
            ["stats", "-m", "{work}/big", "--no-cache"],
            copy_big,
            expect="0|2",
            during=truncate_mid_scan,
        ),
    ]

    good = {"format": "embedding-explorer-session", "version": 1, "text": "the cat"}
    bad_fields = dict(good, neighbors={"metric": "manhattan", "k": 10**30})
    bad_fields["map"] = {"layout": {"ids": [1, 2], "x": [0.0, float("nan")], "y": [0.0, 1.0]}}
    (base / "bad-fields.json").write_text(json.dumps(bad_fields))
    deep = '{"format": "embedding-explorer-session", "map": ' + "[" * 10**5
    (base / "deep.json").write_text(deep)
    sparse(base / "huge-session.json")
    fifo(base / "fifo-session.json")
    shot = ["gui", "--screenshot", "{work}/shot.png", "--session"]
    cases += [
        Case("session: FIFO", [*shot, str(base / "fifo-session.json")], expect="2"),
        Case("session: 1 GB sparse", [*shot, str(base / "huge-session.json")], expect="0|2"),
        Case("session: nested 100,000 deep", [*shot, str(base / "deep.json")], expect="0|2"),
        Case(
            "session: bad metric, k=1e30, NaN map",
            [*shot, str(base / "bad-fields.json")],
            expect="0",
            env={"QT_QPA_PLATFORM": "offscreen"},
        ),
    ]

    def hf_dangling(work: Path) -> None:
        make_hf_cache(work / "hf")
        repo = work / "hf" / "models--acme--tiny-lm"
        (repo / "snapshots" / "ffff").symlink_to(repo / "snapshots" / "gone")
        for blob in (repo / "blobs").iterdir():
            blob.unlink()
        sparse(repo / "refs" / "main")

    def hf_fifo(work: Path) -> None:
        make_hf_cache(work / "hf")
        snap = work / "hf" / "models--acme--tiny-lm" / "snapshots" / "0123abcd"
        for p in snap.iterdir():
            p.unlink()
        fifo(snap / "model.gguf")

    cases += [
        Case(
            "stores: dangling snapshot links, 1 GB ref",
            ["models"],
            hf_dangling,
            expect="0",
            check=lambda o, e: None if "dangling" in o else "dangling link not reported",
        ),
        Case("stores: FIFO model.gguf in a snapshot", ["models"], hf_fifo, expect="0"),
    ]
    return cases


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("-k", default="", help="only the cases whose name holds this")
    args = ap.parse_args(argv)
    base = Path(tempfile.mkdtemp(prefix="ee-hostile-"))
    bad = 0
    try:
        cases = [c for c in build_cases(base) if args.k in c.name]
        print(f"{len(cases)} cases; load {os.getloadavg()[0]:.1f}", flush=True)
        for i, case in enumerate(cases):
            work = base / f"case{i}"
            work.mkdir()
            case.setup(work)
            ok, line = run(case, work)
            bad += not ok
            print(line, flush=True)
            shutil.rmtree(work, ignore_errors=True)
    finally:
        shutil.rmtree(base, ignore_errors=True)
    print(f"{bad} of {len(cases)} cases broke the contract")
    return 1 if bad else 0


if __name__ == "__main__":
    raise SystemExit(main())
