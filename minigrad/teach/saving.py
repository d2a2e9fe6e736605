"""Where the course's pictures go (every chapter that saves one, and ``make figures``).

The README and the slides use pictures the chapters draw (``chart.save("../figures/...")``).
They are rewritten only on purpose: by ``make notebooks`` and ``make figures``, which set
``MINIGRAD_WRITE_FIGURES=1``. Anywhere else (JupyterLab, nbval, the student copy, nbgrader)
a chapter's save writes nothing, so running the course or its tests leaves the files as they
were, and a chapter runs in any folder.
"""

import os
from pathlib import Path

ENVIRONMENT_VARIABLE = "MINIGRAD_WRITE_FIGURES"


def writing_figures():
    """Are pictures being written (``make notebooks``, ``make figures``)?"""
    return os.environ.get(ENVIRONMENT_VARIABLE) == "1"


def figure_file(path):
    """``path`` (its folder made) when pictures are being written, else None."""
    if not writing_figures():
        return None
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    return path
