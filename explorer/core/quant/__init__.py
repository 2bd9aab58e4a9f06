"""One embedding at two precisions: simulated quantisation with the `gguf` package, the check
that two files hold the same vocabulary row for row, the per-row damage pass and neighbour
drift."""
