"""Standing cross-check of hopsim against BookSim2 and CAMINOS (docs/validation/).

``python -m validation.crosscheck --help`` runs it; the reference simulators' numbers are
kept in ``validation/data`` so the comparison also runs without them (CI).
"""
