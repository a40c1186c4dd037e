"""``python -m hsi ...``: the same as the ``hsi`` command."""

import sys

from hsi.cli import main

if __name__ == "__main__":
    sys.exit(main())
