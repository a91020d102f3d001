# A regular package, not a namespace one: ppi-python (a dependency) installs a top-level `tests`
# package of its own into site-packages, which would otherwise shadow this one and break every
# `from tests.fakes import ...`.
