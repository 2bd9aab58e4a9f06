"""Analyses of a whole embedding matrix (Qt-free): statistics, under-trained tokens, token kinds,
input vs output head, the one-hot product, two-model comparison and the session file format.

Every computation that reads the whole matrix streams it in blocks (`blocks.py`), takes a
``ctx: explorer.core.context.JobContext`` (``ctx.check()`` between blocks raises
`explorer.core.errors.Cancelled`; ``ctx.progress(fraction)`` reports 0..1; default
``NULL_CONTEXT``), and returns a plain dataclass with ``as_dict()`` for JSON. Entry points for
the views:

- `stats.compute_stats(model)` → `StatsResult` (norms, per-dimension mean/std, `outliers`,
  `suspicious`, `kinds`, `unused_cosine`); the pass is cached per file.
  `dimensions.dimension_column(model, j)` → one dimension over the vocabulary.
  `kinds.token_kinds(model)` → kind of every row (for "colour by kind").
- `head.head_cosine(model)` → `HeadCosine` (cached); `head.token_view(model, t, k)` →
  neighbours in E and U, overlap, direct path.
- `explain.explain(model, t)` → `Explanation` (product, lookup, `identical`, `cost`, tied).
- `compare.align_vocabularies(a, b)`, `compare.compare_neighbors(a, b, id_in_a, k)`,
  `compare.overlap_distribution(a, b, sample, k)`.
- `session.save_session` / `session.load_session` (format documented there).
"""
