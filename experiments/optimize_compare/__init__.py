"""`task: optimize_compare`: compiled generators against the uncompiled one on held-out seeds, and the strength
curve (experiments/optimize_compare/driver.py)."""
