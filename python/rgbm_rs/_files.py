"""Writing files so that a crash or Ctrl-C never leaves one half-written.

Used by ``save_model`` and the command line.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import stat

__all__ = ["replace_atomically", "same_file"]


@contextlib.contextmanager
def replace_atomically(path, mode: str = "w", encoding="utf-8", newline=None):
    """Open a temporary file next to ``path``; on success, rename it over ``path``.

    The data is flushed to disk before the rename, so ``path`` holds either
    its previous content or the complete new one. If the block raises
    (including ``KeyboardInterrupt``), the temporary file is removed and
    ``path`` is untouched.

    A symbolic link is followed (its target is replaced, the link stays). An
    existing file keeps its permission bits; a new one gets the usual
    ``0o666 & ~umask``. A path that exists and is not a regular file (a
    device such as ``/dev/null``, a FIFO) cannot be replaced by a rename:
    it is written in place.

    Parameters
    ----------
    path : str or os.PathLike
        The file to write.
    mode : {"w", "wb"}
        Text or binary.
    encoding, newline :
        As for :func:`open` (text mode only).

    Yields
    ------
    file object
        Write the new content to it; do not close it.
    """
    binary = "b" in mode
    kwargs = {} if binary else {"encoding": encoding, "newline": newline}
    path = os.fspath(path)
    try:
        st = os.stat(path)
    except FileNotFoundError:
        st = None
    if st is not None and not stat.S_ISREG(st.st_mode):
        # Through the path itself: /dev/stdout names a pipe that realpath cannot spell.
        with open(path, "wb" if binary else "w", **kwargs) as f:
            yield f
        return
    target = os.path.realpath(path)
    folder, name = os.path.split(target)
    # os.open with 0o666 lets the umask apply, as open() would (mkstemp forces 0o600).
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0)
    while True:
        tmp = os.path.join(folder, f".{name}.{secrets.token_hex(6)}.tmp")
        try:
            fd = os.open(tmp, flags, 0o666)
            break
        except FileExistsError:
            continue
    try:
        with open(fd, "wb" if binary else "w", **kwargs) as f:
            if st is not None:
                os.chmod(tmp, stat.S_IMODE(st.st_mode))
            yield f
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def same_file(a, b) -> bool:
    """Whether two paths name the same existing file (through links, ``..``, hard links)."""
    try:
        return os.path.samefile(a, b)
    except (OSError, ValueError):
        return os.path.realpath(os.fspath(a)) == os.path.realpath(os.fspath(b))
