"""Run every test file alone, one pytest process each: a test that passes only in the suite's order is a defect.

Usage: ``python .ci/each_file.py [pytest options]`` from the repository root, in the environment
the suite ran in. Prints one line per file that fails (with its output's tail), then the
closing line ``each-file: N passed, N failed``; exits 1 when any file failed.
"""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
#: pytest's exit statuses that mean the file passed: all passed (0), or every test in it skipped / none collected (5)
PASSED = (0, 5)


def test_files() -> list[Path]:
    """Every ``test_*.py`` under ``tests/``, in path order."""
    return sorted((ROOT / "tests").rglob("test_*.py"))


def main(extra: list[str]) -> int:
    failed: list[str] = []
    start = time.monotonic()
    files = test_files()
    for path in files:
        name = str(path.relative_to(ROOT))
        done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *extra, name],
                              cwd=ROOT, capture_output=True, text=True)
        if done.returncode not in PASSED:
            failed.append(name)
            print(f"FAILED alone: {name} (exit {done.returncode})\n{done.stdout[-3000:]}{done.stderr[-2000:]}",
                  flush=True)
    print(f"ran {len(files)} test files alone in {time.monotonic() - start:.0f} s", flush=True)
    print(f"each-file: {len(files) - len(failed)} passed, {len(failed)} failed", flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
