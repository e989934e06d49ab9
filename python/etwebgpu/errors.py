"""Exceptions raised by etwebgpu: one class per C++ error kind, all subclasses of Error."""


class Error(RuntimeError):
    """An etwebgpu failure. ``kind`` is the C++ ErrorKind name (e.g. "Format")."""

    kind = "Internal"


class IoError(Error):
    kind = "Io"


class FormatError(Error):
    kind = "Format"


class UnsupportedError(Error):
    kind = "Unsupported"


class InvalidArgumentError(Error, ValueError):
    kind = "InvalidArgument"


class LimitError(Error):
    kind = "Limit"


class GpuError(Error):
    kind = "Gpu"


class InternalError(Error):
    kind = "Internal"


_BY_KIND = {c.kind: c for c in (IoError, FormatError, UnsupportedError, InvalidArgumentError,
                                LimitError, GpuError, InternalError)}


def error_class(kind):
    """The exception class for a C++ ErrorKind name (the extension raises through this)."""
    return _BY_KIND.get(kind, Error)
