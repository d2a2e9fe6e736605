"""``show_source(obj)``: the real source of a minigrad function or class (every chapter).

The notebooks never copy the package's code: they show it from the package itself, so
what a learner reads is what runs. JupyterLab shows it highlighted; the plain-text form
(what nbval compares) is the source itself under a one-line header.
"""

import inspect
from pathlib import Path

from . import build

__all__ = ["show_source", "SourceView"]


class SourceView:
    def __init__(self, header, code):
        self.header, self.code = header, code

    def __repr__(self):
        return f"# {self.header}\n{self.code}"

    def _repr_html_(self):
        from pygments import highlight
        from pygments.formatters import HtmlFormatter
        from pygments.lexers import PythonLexer
        formatter = HtmlFormatter(noclasses=True, style="default", nowrap=False)
        body = highlight(self.code, PythonLexer(), formatter)
        return (f'<div style="font-size: 0.9em"><div style="color: #666"># {self.header}</div>'
                f"{body}</div>")


class NotYet:
    """What ``show_source(..., after=piece)`` shows before the learner's piece has passed."""

    def __init__(self, defines, name):
        self.text = (f"(minigrad's own {name} is shown here once your {defines} passes its "
                     "check: write yours first, then run this cell again)")

    def __repr__(self):
        return self.text


def show_source(obj, lines=None, start=None, after=None):
    """The source of ``obj`` (a function, method, class or module of minigrad).

    ``start="text"`` shows it from the first line containing that text to the end (robust
    to edits above it); ``lines=(first, last)`` shows those lines (1-based, like an editor).
    ``after="engine"``: ``obj`` is minigrad's own version of that build piece, shown only once
    the learner's piece has passed its check (``teach.check_piece``) in this session, so the
    answer never sits on screen before theirs is written.
    """
    if after is not None:
        if not build.passed(after):
            name = getattr(obj, "__qualname__", getattr(obj, "__name__", "piece"))
            return NotYet(build.piece_named(after).defines, name)
    target = inspect.unwrap(getattr(obj, "fget", None) or obj)
    code = inspect.getsource(target)
    code = inspect.cleandoc("\n" + code) if code.startswith((" ", "\t")) else code.rstrip("\n")
    if start is not None:
        all_lines = code.split("\n")
        first = next((i for i, line in enumerate(all_lines) if start in line), None)
        if first is None:
            raise ValueError(f"no line of {getattr(target, '__qualname__', target)} contains "
                             f"{start!r}")
        code = "\n".join(all_lines[first:])
    if lines is not None:
        first, last = lines
        code = "\n".join(code.split("\n")[first - 1:last])
    path = Path(inspect.getsourcefile(target))
    parts = path.parts
    if "minigrad" in parts:
        shown = "/".join(parts[len(parts) - 1 - parts[::-1].index("minigrad"):])
    else:
        shown = path.name
    name = getattr(target, "__qualname__", getattr(target, "__name__", ""))
    return SourceView(f"{shown}: {name}" if name else shown, code)
