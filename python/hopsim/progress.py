"""The progress bar class: a notebook's widget where Jupyter can draw one (``ipywidgets``,
the ``notebook`` extra), else the text bar. ``tqdm.auto`` alone warns in red ("IProgress
not found") in a notebook without ipywidgets, before falling back to the same text bar."""

from __future__ import annotations

import importlib.util
from typing import Any


def bar_class() -> Any:
    if importlib.util.find_spec("ipywidgets") is not None:
        from tqdm.auto import tqdm
    else:
        from tqdm.std import tqdm
    return tqdm
