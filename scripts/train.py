"""Train a hyperspectral classifier: ``python scripts/train.py --scene indian_pines``.

The same as ``hsi train`` (``python scripts/train.py --help`` lists every option); the
logic lives in :mod:`hsi.cli.train` and :mod:`hsi.training.run`.
"""

from __future__ import annotations

import os
import sys

if __name__ == "__main__":
    # scripts/inspect.py would shadow the stdlib ``inspect`` for every later import while this
    # folder is sys.path[0]; drop it before importing anything else.
    _here = os.path.dirname(os.path.abspath(__file__))
    sys.path[:] = [p for p in sys.path if os.path.abspath(p or os.curdir) != _here]


def main(argv: list[str] | None = None) -> int:
    """Run ``hsi train`` with ``argv``."""
    from hsi.cli import script_main

    return script_main("train", argv)


if __name__ == "__main__":
    sys.exit(main())
