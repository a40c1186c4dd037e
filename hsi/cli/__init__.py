"""The ``hsi`` command: ``hsi train``, ``hsi pretrain``, ``hsi evaluate``, ``hsi infer``, ``hsi inspect``, ``hsi scenes``, ... (and ``python -m hsi``).

Each subcommand is a module of this package with ``HELP`` (one line), ``add_arguments(parser)``
and ``run(args) -> int``; :data:`COMMANDS` lists them. Every expected failure (an
:class:`~hsi.errors.HSIError`) ends in one line ``error: ...`` on stderr and exit status 2
(:func:`main`); a bad option value names the option as it is written on the command line.
Any other exception is a bug: it propagates with its traceback (exit status 1). Set
``HSI_TRACEBACK=1`` to see the traceback behind an error line.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
from collections.abc import Sequence

from hsi.errors import HSIError, OptionError, UsageError

__all__ = ["COMMANDS", "CommandParser", "main"]

#: subcommand name -> module under hsi.cli
COMMANDS = {
    "train": "hsi.cli.train",
    "pretrain": "hsi.cli.pretrain",
    "infer": "hsi.cli.infer",
    "inspect": "hsi.cli.inspect",
    "scenes": "hsi.cli.scenes",
    "convert": "hsi.cli.convert",
    "doctor": "hsi.cli.doctor",
    "evaluate": "hsi.cli.evaluate",
}

#: commands that run Lightning: quiet unless --verbose (:func:`hsi._quiet.quiet_lightning`)
VERBOSE_COMMANDS = ("train", "pretrain", "infer", "doctor", "evaluate")

EXIT_USAGE = 2
EXIT_INTERRUPTED = 130


class CommandParser(argparse.ArgumentParser):
    """An ``ArgumentParser`` whose errors are one line ``error: ...`` (exit 2), without the usage block."""

    def error(self, message: str) -> None:  # type: ignore[override]
        raise UsageError(message.removeprefix("argument "))


def one_line(text: str) -> str:
    """``text`` with its whitespace (newlines included) collapsed."""
    return " ".join(str(text).split())


def describe_error(err: BaseException, flags: dict[str, str]) -> str:
    """The ``error:`` line for ``err``; option names are shown as their flags (``--patch-size``)."""
    if isinstance(err, OptionError):
        value = err.value if isinstance(err.value, str) else repr(err.value)
        return f"{flags.get(err.option, '--' + err.option.replace('_', '-'))}: {value}: {one_line(err.allowed)}"
    return one_line(str(err) or type(err).__name__)


def build_parser(command: str | None = None) -> CommandParser:
    """The ``hsi`` parser with one subparser per command; only ``command``'s gets its options.

    ``hsi train``, ``evaluate``, ``infer`` and ``doctor`` build theirs from the checked-in option
    table (:mod:`hsi.cli.table`), so parsing imports neither torch nor Lightning; those four also
    get ``--verbose`` (Lightning's banners and warnings, hidden by default).
    """
    import hsi

    parser = CommandParser(prog="hsi", description="Deep learning on hyperspectral scenes, leakage-free.")
    parser.add_argument("--version", action="version", version=f"hsi {hsi.__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=CommandParser)
    for name, module_name in COMMANDS.items():
        module = importlib.import_module(module_name)
        subparser = sub.add_parser(name, help=module.HELP, description=module.__doc__.split("\n\n")[0])
        if name == command:
            module.add_arguments(subparser)
            if name in VERBOSE_COMMANDS:
                subparser.add_argument("--verbose", action="store_true",
                                       help="show Lightning's banners, tips and warnings (default: the package's own lines)")
        subparser.set_defaults(_module=module)
    return parser


def run_command(module: object, args: argparse.Namespace) -> int:
    """Run one command; expected failures become one ``error:`` line and exit status 2.

    Only :class:`~hsi.errors.HSIError` is expected; any other exception (a bare
    ``ValueError`` or ``OSError`` from deep inside) is a bug and propagates with its
    traceback, so ``hsi`` / ``python -m hsi`` exit with status 1.
    """
    from hsi._quiet import one_line_warnings, quiet_lightning

    ranks_repeat = getattr(module, "ranks_repeat", lambda _: True)(args)
    quiet_lightning(verbose=getattr(args, "verbose", True), ranks_repeat=ranks_repeat)  # no --verbose: left alone
    one_line_warnings()
    flags = getattr(module, "FLAGS", lambda: {})()
    try:
        return int(module.run(args) or 0)  # type: ignore[attr-defined]
    except KeyboardInterrupt as err:
        print(f"\ninterrupted: {err}" if str(err) else "\ninterrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    except BrokenPipeError:  # the reader went away (`hsi inspect f | head`): nothing left to say
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    except UsageError as err:
        print(f"error: {one_line(str(err))}", file=sys.stderr)
        return EXIT_USAGE
    except HSIError as err:  # expected: bad input, options, files; anything else is a bug (traceback, exit 1)
        if os.environ.get("HSI_TRACEBACK"):
            raise
        print(f"error: {describe_error(err, flags)}", file=sys.stderr)
        return EXIT_USAGE


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``hsi`` console script."""
    argv = list(sys.argv[1:] if argv is None else argv)
    parser = build_parser(next((a for a in argv if not a.startswith("-")), None))
    try:
        args = parser.parse_args(argv)
    except UsageError as err:
        print(f"error: {one_line(str(err))}", file=sys.stderr)
        return EXIT_USAGE
    if getattr(args, "_module", None) is None:
        parser.print_help(sys.stderr)
        return EXIT_USAGE
    return run_command(args._module, args)


def script_main(command: str, argv: Sequence[str] | None = None) -> int:
    """``scripts/<command>.py``: the same as ``hsi <command> ...``."""
    return main([command, *(sys.argv[1:] if argv is None else argv)])
