"""Check a data pipeline: ``python scripts/check_loader.py --scene synthetic --out doctor/``.

The same as ``hsi doctor`` (``python scripts/check_loader.py --help`` lists every option);
the logic lives in :mod:`hsi.cli.doctor` and :mod:`hsi.doctor`.
"""

from __future__ import annotations

import os
import sys

if __name__ == "__main__":
    # scripts/inspect.py would shadow the stdlib ``inspect`` while this folder is sys.path[0]
    _here = os.path.dirname(os.path.abspath(__file__))
    sys.path[:] = [p for p in sys.path if os.path.abspath(p or os.curdir) != _here]


def main(argv: list[str] | None = None) -> int:
    """Run ``hsi doctor`` with ``argv``."""
    from hsi.cli.doctor import main as doctor_main

    return doctor_main(argv)


if __name__ == "__main__":
    sys.exit(main())
