"""Whole-scene classification map: ``python scripts/infer_full.py --checkpoint best.ckpt --scene NAME --out DIR``.

The same as ``hsi infer`` (``--help`` lists every option); the logic lives in
:mod:`hsi.cli.infer` and :mod:`hsi.infer`.
"""

from __future__ import annotations

import os
import sys

if __name__ == "__main__":
    # scripts/inspect.py would shadow the stdlib ``inspect`` while this folder is sys.path[0].
    _here = os.path.dirname(os.path.abspath(__file__))
    sys.path[:] = [p for p in sys.path if os.path.abspath(p or os.curdir) != _here]


def main(argv: list[str] | None = None) -> int:
    """Run ``hsi infer`` with ``argv``."""
    from hsi.cli import script_main

    return script_main("infer", argv)


if __name__ == "__main__":
    sys.exit(main())
