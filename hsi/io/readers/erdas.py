"""The ERDAS LAN/GIS reader (recognised by suffix or by its magic word); see :mod:`hsi.io.erdas`."""

from __future__ import annotations

from pathlib import Path

from hsi.io.readers.registry import Reader, register_reader
from hsi.io.source import RawSource


@register_reader
class ErdasReader(Reader):
    """ERDAS 7.x ``.lan``/``.gis`` images, or any file starting with their magic word."""

    name = "erdas"
    description = "ERDAS .lan/.gis"
    suffixes = frozenset({".lan", ".gis"})

    def sniff(self, path: Path) -> bool:
        from hsi.io.erdas import is_erdas

        return is_erdas(path)

    def open(self, path: Path, key: str | None, georef: str) -> RawSource:
        from hsi.io.erdas import open_erdas

        return open_erdas(path)
