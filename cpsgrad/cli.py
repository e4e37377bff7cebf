"""The `cpsgrad` command: `show` a function's generated program, run the `demo`, list `ops`."""

from __future__ import annotations

import argparse
import importlib
import importlib.util
import os
import sys
from pathlib import Path

from cpsgrad.errors import CpsgradError


class TargetError(Exception):
    """A TARGET that does not name a function."""


def load_target(target: str):
    """The function named by `package.module:function`, `path/file.py:function` or `...:Class.method`."""
    module_part, separator, attribute_path = target.rpartition(":")
    if not separator or not module_part or not attribute_path:
        raise TargetError(f"{target!r} is not a target; write module:function or path/to/file.py:function")
    if module_part.endswith(".py") or os.sep in module_part:
        path = Path(module_part)
        if not path.is_file():
            raise TargetError(f"no such file: {module_part}")
        name = "cpsgrad_target_" + path.stem.replace("-", "_")
        spec = importlib.util.spec_from_file_location(name, path.resolve())
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        sys.path.insert(0, str(path.resolve().parent))
        try:
            spec.loader.exec_module(module)
        except Exception as error:  # the user's module failed to import: say so, briefly
            raise TargetError(f"importing {module_part} failed: {type(error).__name__}: {error}") from None
    else:
        sys.path.insert(0, os.getcwd())
        try:
            module = importlib.import_module(module_part)
        except ImportError as error:
            raise TargetError(f"cannot import module {module_part!r}: {error}") from None
    value = module
    for part in attribute_path.split("."):
        if not hasattr(value, part):
            raise TargetError(f"{module_part} has no attribute {attribute_path!r}")
        value = getattr(value, part)
    from cpsgrad.api import original

    return original(value)


def _highlighter(stream):
    if not stream.isatty() or os.environ.get("NO_COLOR"):
        return lambda text: text
    from pygments import highlight
    from pygments.formatters import TerminalFormatter
    from pygments.lexers import PythonLexer

    return lambda text: highlight(text, PythonLexer(), TerminalFormatter())


def _argnums(text: str):
    try:
        values = tuple(int(part) for part in text.split(","))
    except ValueError:
        raise argparse.ArgumentTypeError(f"argnums must be integers separated by commas, not {text!r}") from None
    return values[0] if len(values) == 1 else values


def _names(text: str) -> list[str]:
    return [part.strip() for part in text.split(",") if part.strip()]


def _parser() -> argparse.ArgumentParser:
    description = "Gradients of Python functions by a CPS source transform."
    parser = argparse.ArgumentParser(prog="cpsgrad", description=description)
    commands = parser.add_subparsers(dest="command", required=True)
    show = commands.add_parser("show", help="print the program cpsgrad generates for a function")
    show.add_argument("target", help="package.module:function, path/to/file.py:function or ...:Class.method")
    show.add_argument(
        "--stage",
        choices=("normalize", "cps", "final"),
        default="final",
        help="which pass's output (default: final, the program that runs)",
    )
    show.add_argument(
        "--argnums", type=_argnums, default=0, help="differentiated positional arguments, e.g. 0 or 0,2 (default 0)"
    )
    show.add_argument(
        "--numbers", type=_names, default=None, metavar="NAMES",
        help="parameters that hold Python numbers, e.g. x,n: the program for them drops array handling "
        "(default: the parameters annotated float, int or bool); --numbers '' means none",
    )
    show.add_argument(
        "--mode", choices=("reverse", "forward"), default="reverse",
        help="reverse: the derivative program grad runs (default); forward: the tangent program jvp runs",
    )
    show.add_argument(
        "--annotate", action="store_true",
        help="head each block of the final program that comes from one of your statements with a comment "
        "'# from line N: <your line>' (final stage only)",
    )
    commands.add_parser("demo", help="differentiate a small physics simulation and show what happened")
    commands.add_parser("ops", help="list the tensor kernels, their devices and dtypes")
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = _parser()
    arguments = parser.parse_args(argv)
    if arguments.command == "show" and arguments.annotate and arguments.stage != "final":
        parser.error("--annotate marks your lines in the final stage only")
    forward = arguments.command == "show" and arguments.mode == "forward"
    if forward and (arguments.stage != "final" or arguments.annotate):
        parser.error("--mode forward prints the final tangent program only (no --stage, no --annotate)")
    highlight = _highlighter(sys.stdout)
    try:
        if arguments.command == "show":
            import cpsgrad

            function = load_target(arguments.target)
            text = cpsgrad.show(
                function, stage=arguments.stage, argnums=arguments.argnums, numbers=arguments.numbers,
                annotate=arguments.annotate, mode=arguments.mode,
            )
            print(highlight(text), end="")
            return 0
        if arguments.command == "demo":
            from cpsgrad import demo

            return demo.run(highlight=highlight)
        from cpsgrad import kernels

        for line in kernels.describe():
            print(line)
        return 0
    except (TargetError, CpsgradError) as error:
        print(f"cpsgrad: {error}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
