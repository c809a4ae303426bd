"""Which files the command line may write: never an input, never data replaced by a model."""

from __future__ import annotations

import os

from ._report import CLIError, UsageError


def check_writable(path: str, what: str, inputs) -> None:
    """Fail early, before any work, if ``path`` cannot be written or is one of the ``inputs``.

    ``inputs`` is a list of ``(option, path)``: writing over one of them would
    destroy what the command reads (through any spelling: links, ``..``).
    """
    from .._files import same_file

    for option, source in inputs:
        if same_file(path, source):
            raise UsageError(f"refusing to write the {what} over {option} {source!r}: they are the same file")
    target = os.path.realpath(path)
    folder = os.path.dirname(target)
    if os.path.isdir(target):
        raise CLIError(f"{what} {path!r} is a directory")
    if not os.path.isdir(folder):
        raise CLIError(f"cannot write {what} {path!r}: folder {folder!r} does not exist")
    # The output replaces the file by a rename, which a read-only file would not stop: ask the file too.
    if not os.access(folder, os.W_OK) or (os.path.exists(target) and not os.access(target, os.W_OK)):
        raise CLIError(f"cannot write {what} {path!r}: permission denied")


def _holds_model(path: str):
    """True if ``path`` is an rgbm_rs model file, False if it holds something else, None if empty or absent."""
    from .._model_file import holds_model

    return holds_model(path)


def check_model_output(path: str) -> None:
    """``train --model``: replace a model or create a file, never replace other data (e.g. a typo'd CSV)."""
    if os.path.isfile(path) and _holds_model(path) is False:
        raise CLIError(
            f"refusing to write the model over {path!r}: it exists and is not an rgbm_rs model file "
            "(remove it or choose another name)"
        )


def check_not_a_model(path: str, what: str) -> None:
    """``predict --out``, ``export``'s OUT: never replace a model file with ``what`` (predictions, an export)."""
    if os.path.isfile(path) and _holds_model(path):
        raise CLIError(f"refusing to write {what} over {path!r}: it is an rgbm_rs model file (choose another name)")
