"""Preparing an uploaded experiment for rating: the pipeline (validate and load, impact metrics,
sample), its engines (in memory, Dask), what keeps a run honest (guard), and the re-runs and
reconciliation of stalled runs (control)."""
