"""The ENVI reader: a ``.hdr`` header beside a raw binary; see :mod:`hsi.io.envi`."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from hsi.errors import DatasetNotFoundError
from hsi.io.readers.registry import Reader, register_reader
from hsi.io.source import RawSource

#: suffixes of ENVI binaries: a file with one of them and no header beside it is a header missing
BINARY_EXT = frozenset({".img", ".dat", ".raw", ".bsq", ".bil", ".bip", ".bin"})


@register_reader
class EnviReader(Reader):
    """ENVI images, named by the header or by the binary whose header lies beside it."""

    name = "envi"
    description = "ENVI (.hdr header + binary such as .img/.dat/.raw/.bsq/.bil/.bip)"
    suffixes = frozenset({".hdr"})
    carries_georef = True

    def sniff(self, path: Path) -> bool:
        """A binary with ``<name>.hdr`` or ``<stem>.hdr`` beside it (an ERDAS file, by its magic, is not one)."""
        from hsi.io.envi import find_header
        from hsi.io.erdas import is_erdas

        return not is_erdas(path) and find_header(path) is not None

    def near_miss(self, path: Path) -> Exception | None:
        if path.suffix.lower() not in BINARY_EXT:
            return None
        return DatasetNotFoundError(f"{path}: looks like an ENVI binary but no header was found beside it "
                                    f"(tried {path.name}.hdr and {path.stem}.hdr)")

    def open(self, path: Path, key: str | None, georef: str) -> RawSource:
        from hsi.io.envi import open_envi

        return open_envi(path, georef=georef)

    def files(self, path: Path) -> list[Path]:
        """The path given (header or binary), then the other of the pair."""
        from hsi.io.envi import find_pair

        header, binary = find_pair(path)
        return [path, binary if path == header else header]

    def label_georef(self, path: Path, key: str | None) -> Any:
        from hsi.io.envi import find_pair, read_header
        from hsi.io.georef import from_envi

        header, _ = find_pair(path)
        return from_envi(read_header(header), str(header))
