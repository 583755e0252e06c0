"""Alloy's errors as Python exceptions.

Every failure of the C API becomes an AlloyError (or a subclass chosen by its
ALLOY_ERR_* code) whose message is Alloy's own, unchanged: str(e) is what
`alloy run` would print after "alloy run: ". e.code is the numeric code and
e.code_name its ALLOY_ERR_* name. Codes newer than this package give a plain
AlloyError (docs/abi.md: readers must expect newer codes).
"""


class AlloyError(Exception):
    code = 0
    code_name = "ALLOY_ERR_UNKNOWN"

    def __init__(self, message, code=None):
        super().__init__(message)
        self.message = message
        if code is not None:
            self.code = code


class InvalidArgumentError(AlloyError, ValueError):
    code, code_name = 1, "ALLOY_ERR_INVALID_ARGUMENT"


class ParseError(AlloyError, ValueError):
    code, code_name = 2, "ALLOY_ERR_PARSE"


class AlloyTypeError(AlloyError, TypeError):
    """ALLOY_ERR_TYPE: a dtype or shape check failed (also a TypeError)."""
    code, code_name = 3, "ALLOY_ERR_TYPE"


class NotFoundError(AlloyError, LookupError):
    code, code_name = 4, "ALLOY_ERR_NOT_FOUND"


class UnsupportedError(AlloyError):
    code, code_name = 5, "ALLOY_ERR_UNSUPPORTED"


class AlloyIOError(AlloyError, OSError):
    """ALLOY_ERR_IO: the operating system refused a read or write."""
    code, code_name = 6, "ALLOY_ERR_IO"


class OutOfMemoryError(AlloyError, MemoryError):
    code, code_name = 7, "ALLOY_ERR_OUT_OF_MEMORY"


class InternalError(AlloyError):
    code, code_name = 8, "ALLOY_ERR_INTERNAL"


class VersionError(AlloyError):
    code, code_name = 9, "ALLOY_ERR_VERSION"


class DeviceLostError(AlloyError):
    code, code_name = 10, "ALLOY_ERR_DEVICE_LOST"


class CancelledError(AlloyError):
    code, code_name = 11, "ALLOY_ERR_CANCELLED"


class UnavailableError(AlloyError):
    code, code_name = 12, "ALLOY_ERR_UNAVAILABLE"


class DeclinedError(AlloyError):
    code, code_name = 13, "ALLOY_ERR_DECLINED"


class LibraryNotFound(AlloyError, ImportError):
    """liballoy.so could not be found (no C error code: raised by Python)."""
    code, code_name = 0, "liballoy.so not found"



BY_CODE = {c.code: c for c in (InvalidArgumentError, ParseError, AlloyTypeError, NotFoundError,
                               UnsupportedError, AlloyIOError, OutOfMemoryError, InternalError,
                               VersionError, DeviceLostError, CancelledError, UnavailableError,
                               DeclinedError)}


def error_from_code(code, message):
    cls = BY_CODE.get(code)
    return cls(message) if cls else AlloyError(message, code)
