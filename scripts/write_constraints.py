"""``make lock``: print a pip constraints file of every package installed in this Python.

Run by the fresh environment that ``make lock`` builds; its output becomes constraints.txt,
which ``make lab`` and ``make test`` install with (``pip install -c constraints.txt``), so a
course run next year gets the versions CI saw. A local version label such as ``+cpu`` is
dropped: ``torch==2.13.0`` then matches PyTorch's CPU wheel and PyPI's alike.
"""

import platform
import sys
from importlib.metadata import distributions

SKIP = {"minigrad", "pip", "setuptools", "wheel"}  # the project itself and the installers


def pins():
    found = {}
    for dist in distributions():
        name = dist.metadata["Name"]
        if name and name.lower() not in SKIP:
            found[name.lower()] = f"{name}=={dist.version.split('+')[0]}"
    return [found[key] for key in sorted(found)]


def main():
    print("# Written by `make lock` (scripts/write_constraints.py): the versions `make test` passed with,")
    print(f"# installed by pip on Python {platform.python_version()} ({sys.platform}). Edit by running `make lock`.")
    print("\n".join(pins()))


if __name__ == "__main__":
    main()
