"""The lists the command line shows are the registries': readable formats in the help texts, ``--format`` and
``--model`` choices (through :mod:`hsi.cli.names`), with nothing typed again by hand."""

from __future__ import annotations

from pathlib import Path

import pytest

from hsi.classical import CLASSICAL_MODELS
from hsi.io.readers import Reader, get_reader, list_readers, register_reader, unregister_reader
from hsi.models import list_models
from hsi.sinks import list_sinks


def command_help(command: str, capsys) -> str:
    """``hsi COMMAND --help`` (its whitespace collapsed), from the real parser in this process."""
    from hsi.cli import build_parser

    with pytest.raises(SystemExit) as stop:
        build_parser(command).parse_args([command, "--help"])
    assert stop.value.code == 0
    return " ".join(capsys.readouterr().out.split())


@pytest.mark.parametrize("command", ["inspect", "convert", "infer"])
def test_the_help_names_every_reader_and_its_suffixes(command, capsys):
    text = command_help(command, capsys)
    for name in list_readers():
        assert f"{name} ({' '.join(sorted(get_reader(name).suffixes))})" in text, (command, name)


def test_the_cube_option_of_train_points_to_the_list(capsys):
    assert "any format a registered reader reads; `hsi inspect --help` lists them" in command_help("train", capsys)


class ToyReader(Reader):
    """A format registered for one test."""

    name = "toycube"
    description = "toy .toyc"
    suffixes = frozenset({".toyc"})

    def open(self, path: Path, key, georef):  # pragma: no cover - never read
        raise NotImplementedError


def test_a_reader_registered_in_this_process_is_in_the_help(capsys):
    register_reader(ToyReader)
    try:
        assert "toycube (.toyc)" in command_help("inspect", capsys)
    finally:
        unregister_reader("toycube")
    assert "toycube" not in command_help("inspect", capsys)


def test_the_format_choices_are_the_registry(capsys):
    assert f"Choices: {', '.join(list_sinks())}." in command_help("infer", capsys)


def test_the_model_choices_are_the_registry(hsi_main, tmp_path):
    status, _, err = hsi_main(["train", "--model", "nosuch"], tmp_path)
    assert status == 2 and err.strip().endswith(f"expected one of {', '.join([*list_models(), *CLASSICAL_MODELS])}")
