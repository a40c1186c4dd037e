"""List the registry's scenes, the files each needs and where they are looked for.

``hsi scenes`` prints one line per scene; ``hsi scenes NAME`` the files of one scene
(names, accepted variants, URL, SHA-256, size) and whether each is present under the data
root; ``hsi scenes --guide`` the full guide to data folders, downloads and verification.
"""

from __future__ import annotations

import argparse
import sys

HELP = "list registry scenes, the files they need and where they go (--guide: the data guide)"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """``[NAME] [--root DIR] [--guide]``."""
    parser.add_argument("name", nargs="?", default=None, help="a scene to describe in full")
    parser.add_argument("--root", default=None, help="data root to check for the files "
                        "(default: $HSI_DATA_DIR, else ~/.cache/hsi)")
    parser.add_argument("--guide", action="store_true", help="print the guide to data folders and downloads")


def guide_text() -> str:
    """The data guide shipped with the package (``hsi/scenes/GUIDE.md``; ``data/README.md`` is its copy)."""
    from hsi.scenes.guide import guide_text as text

    return text()


def describe_scene(name: str, root: str | None) -> str:
    """The files of one scene and whether each is present under ``root``."""
    from hsi.scenes.files import locate, resolve_root, search_dirs
    from hsi.scenes.registry import get_scene_spec

    spec = get_scene_spec(name)
    base = resolve_root(root)
    lines = [f"{spec.name} ({spec.family}): {spec.description}"]
    if not spec.files:
        lines.append("  no files needed")
        return "\n".join(lines)
    lines.append("  looked for in: " + ", ".join(str(d) for d in search_dirs(base, spec.name)))
    for f in spec.files:
        found = locate(base, spec.name, f.names)
        lines.append(f"  {f.filename}: {'present at ' + str(found) if found else 'missing'}")
        if f.alternatives:
            lines.append(f"    also accepted: {', '.join(f.alternatives)}")
        lines.append(f"    url: {f.url or 'none (place it by hand)'}")
        lines.append(f"    sha256: {f.sha256 or 'no reference known (checked by shape)'}"
                     + (f", {f.size} bytes" if f.size else ""))
        if f.note:
            lines.append(f"    note: {f.note}")
    return "\n".join(lines)


def run(args: argparse.Namespace) -> int:
    """Print the guide, one scene, or the list."""
    from hsi.scenes.files import resolve_root
    from hsi.scenes.registry import describe_scenes

    if args.guide:
        print(guide_text(), end="")  # the text ends with its own newline: data/README.md byte for byte
    elif args.name:
        print(describe_scene(args.name, args.root))
    else:
        print(describe_scenes())
        print(f"\ndata root: {resolve_root(args.root)}  (hsi scenes NAME: its files; hsi scenes --guide: the guide)",
              file=sys.stdout)
    return 0
