"""Drawing pairs after the first sample: batches appended to a sample (spec §10), coupled to an
earlier experiment's draws (§11), and the verdicts a workspace already holds reused."""
