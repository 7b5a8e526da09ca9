"""Exceptions for the errors the C++ client (engines/graphfs_client.hpp) reports.

The C++ client returns ``Error{code, message}``: an errno value and a message that names the
job, the control file, the errno text, the daemon's reason when it gave one (``last_error`` of
the job's ``status``) and where to look further, e.g.::

    graphfs job bfs-123-0: write active: Invalid argument: active: ... (see /mnt/.graphfs/jobs/bfs-123-0/status)

Here each such error is raised as an exception whose class says the errno (``error_for``), with
the same message. Every class derives from :class:`GraphfsError` (an ``OSError``: ``errno``,
``strerror`` and ``str()`` as usual) and from the builtin exception Python itself raises for
that errno, so ``except FileExistsError`` catches :class:`JobExistsError` too.
"""

from __future__ import annotations

import errno as _errno
import os


class GraphfsError(OSError):
    """Base of every error the client raises. ``errno`` is the C++ client's ``Error::code``,
    ``message`` (also ``str(error)``) its ``Error::message``."""

    def __init__(self, code: int, message: str):
        super().__init__(code, message)
        self.message = message

    def __str__(self) -> str:
        return self.message


class NotOnMountError(GraphfsError, FileNotFoundError):
    """ENOENT: the graph directory is not on a graphfs mount (no ``.graphfs/jobs/`` in it or
    any parent)."""


class NotFoundError(GraphfsError, FileNotFoundError):
    """ENOENT: the graph directory does not exist, or the daemon says it is not a graph (not
    indexed, a stale index: the reason is in the message), or a job or LP file is gone."""


class JobExistsError(GraphfsError, FileExistsError):
    """EEXIST: a job of that name is registered already (``mkdir jobs/NAME``)."""


class InvalidArgumentError(GraphfsError, ValueError):
    """EINVAL: a value the client or the daemon refused (partition size, a bitmap of the wrong
    size or with bits past V, a vertex id out of range, a bad job name or graph path)."""


class AccessDeniedError(GraphfsError, PermissionError):
    """EACCES / EPERM: the job belongs to another user, the writer cannot read the graph, or a
    path leads out of the mount's source through a symlink."""


class BusyError(GraphfsError):
    """EBUSY: another read of ``next`` of this job is pending, or ``graph`` was written while
    the job's ``memory`` is open."""


class NotSupportedError(GraphfsError):
    """EOPNOTSUPP: ``memory`` cannot be opened (no FUSE passthrough). The client then reads
    ``lp-SEQ`` instead, as the C++ client does; raised only by explicit calls."""


class ProtocolError(GraphfsError):
    """EPROTO: an answer the client cannot parse (``next``, ``lp-SEQ.map``, ``lp-SEQ.pieces``,
    ``status``), or pieces that lie past the mapped memory."""


class GridFormatError(GraphfsError, ValueError):
    """EINVAL: a graph directory that is not GridGraph's grid format as ``meta`` describes it
    (``meta`` malformed, an offsets table or an edge file of the wrong size); the message names
    the file and what is wrong, as the C++ tools' ``GridLayout::Open`` does."""

    def __init__(self, message: str):
        super().__init__(_errno.EINVAL, message)


_BY_ERRNO = {
    _errno.EEXIST: JobExistsError,
    _errno.EINVAL: InvalidArgumentError,
    _errno.EACCES: AccessDeniedError,
    _errno.EPERM: AccessDeniedError,
    _errno.EBUSY: BusyError,
    _errno.EOPNOTSUPP: NotSupportedError,
    _errno.EPROTO: ProtocolError,
    _errno.ENOENT: NotFoundError,
}


def error_for(code: int, message: str) -> GraphfsError:
    """The exception for errno ``code`` (GraphfsError itself for codes without a class of
    their own, e.g. EIO), carrying ``message``."""
    return _BY_ERRNO.get(code, GraphfsError)(code, message)


def strerror(code: int) -> str:
    return os.strerror(code)
