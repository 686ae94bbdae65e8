"""Stage 2 of the pipeline: formula strings -> sympy expressions (safely), derivation and proofs."""
