"""Describe a hyperspectral file: ``python scripts/inspect.py FILE [--key K] [--layout L]``.

The same as ``hsi inspect``; the logic lives in :mod:`hsi.cli.inspect`.
"""

from __future__ import annotations

import os
import sys

if __name__ == "__main__":
    # This file is named like the stdlib ``inspect`` module; when run as a script its folder
    # is sys.path[0] and would shadow it for every later import (dataclasses, numpy...).
    _here = os.path.dirname(os.path.abspath(__file__))
    sys.path[:] = [p for p in sys.path if os.path.abspath(p or os.curdir) != _here]


def main(argv: list[str] | None = None) -> int:
    """Run ``hsi inspect`` with ``argv``."""
    from hsi.cli import script_main

    return script_main("inspect", argv)


if __name__ == "__main__":
    sys.exit(main())
