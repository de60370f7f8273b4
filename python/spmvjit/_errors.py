"""spmvjit's exceptions: one class per C API status, all under spmvjit.Error.

Each also derives from the built-in exception a Python caller would expect (ValueError for a bad
argument or matrix, MemoryError for out of memory, ...), so ``except ValueError`` keeps working.
The message is spmv_last_error()'s text; ``.status`` is the C API's status code.
"""


class Error(Exception):
    """Base of every error the spmvjit library reports. ``status``: the spmv_status_t code."""

    status = 0

    def __init__(self, message, status=None):
        super().__init__(message)
        if status is not None:
            self.status = status


class InvalidValueError(Error, ValueError):
    status = 1


class InvalidMatrixError(Error, ValueError):
    status = 2


class SizeOverflowError(Error, OverflowError):
    status = 3


class UnsupportedError(Error, NotImplementedError):
    status = 4


class NoDeviceError(Error, RuntimeError):
    status = 5


class OutOfMemoryError(Error, MemoryError):
    status = 6


class CompileError(Error, RuntimeError):
    status = 7


class IOFailedError(Error, OSError):
    status = 8


class ParseError(Error, ValueError):
    status = 9


class ExecutionError(Error, RuntimeError):
    status = 10


class InternalError(Error, RuntimeError):
    status = 11


_BY_STATUS = {c.status: c for c in (InvalidValueError, InvalidMatrixError, SizeOverflowError,
                                    UnsupportedError, NoDeviceError, OutOfMemoryError, CompileError,
                                    IOFailedError, ParseError, ExecutionError, InternalError)}


def error_class(status):
    """The exception class for a C API status (Error for a code this module does not know)."""
    return _BY_STATUS.get(int(status), Error)
