"""The studies of docs/studies/, one package per study: its scripts, a README with the
commands, and its kept runs (data/) where the study keeps them. Run a study's script from
the repository root as a module, e.g. ``python -m studies.vc_management.figures --help``."""
