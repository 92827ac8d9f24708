"""What the worker recomputes from the verdicts so far: the estimate snapshots, ΔRecall and IQ with
the per-slice estimates (derived), the rater-aware estimates, and the live channel that tells
pages."""
