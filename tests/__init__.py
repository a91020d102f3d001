"""The test suite; a regular package, so `tests.*` imports never resolve to a site-packages `tests`
(ppi-python 0.2.3 installs one)."""
