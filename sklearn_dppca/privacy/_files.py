"""Budget files on disk: an exclusive OS lock held across a read and a write,
and an atomic write (a temporary file renamed over the old one), shared by the
accountant's budget files and the custodian's witness (:mod:`._seal`)."""

import contextlib
import json
import os
import tempfile
import time

#: The suffix of the lock file beside a locked file.
_LOCK_SUFFIX = ".lock"


@contextlib.contextmanager
def file_lock(path):
    """An exclusive OS lock on ``path``'s lock file, held inside the block.

    The lock is taken on ``<path>.lock``, never replaced, rather than on the
    budget file, which each write replaces (a lock on a replaced file would lock
    nothing). The OS drops it when the process dies.
    """
    fd = os.open(path + _LOCK_SUFFIX, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        _lock_fd(fd)
        try:
            yield
        finally:
            _unlock_fd(fd)
    finally:
        os.close(fd)


try:                                    # POSIX
    import fcntl

    def _lock_fd(fd):
        fcntl.flock(fd, fcntl.LOCK_EX)

    def _unlock_fd(fd):
        fcntl.flock(fd, fcntl.LOCK_UN)

except ImportError:                     # pragma: no cover (Windows)
    import msvcrt

    def _lock_fd(fd):
        os.lseek(fd, 0, os.SEEK_SET)
        while True:
            try:
                msvcrt.locking(fd, msvcrt.LK_NBLCK, 1)
                return
            except OSError:
                time.sleep(0.01)

    def _unlock_fd(fd):
        os.lseek(fd, 0, os.SEEK_SET)
        msvcrt.locking(fd, msvcrt.LK_UNLCK, 1)


def write_json(data, path):
    """Write ``data`` to ``path`` atomically (a temporary file renamed over it)."""
    directory = os.path.dirname(os.path.abspath(path))
    handle, temporary = tempfile.mkstemp(
        prefix=f".{os.path.basename(path)}.", suffix=".tmp", dir=directory)
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as stream:
            json.dump(data, stream, indent=2, allow_nan=False)
            stream.write("\n")
            stream.flush()
            os.fsync(stream.fileno())
        os.replace(temporary, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise
