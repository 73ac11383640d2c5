"""dpestim's benchmarks, by topic; ``python -m benchmarks`` runs them (see README)."""
