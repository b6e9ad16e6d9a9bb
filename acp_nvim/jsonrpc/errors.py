"""JSON-RPC 2.0 error codes and the exceptions that carry them across the connection."""

from __future__ import annotations

from typing import ClassVar

PARSE_ERROR = -32700
INVALID_REQUEST = -32600
METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602
INTERNAL_ERROR = -32603
# Not in JSON-RPC 2.0 itself: the LSP-style code for "answered because it was cancelled".
REQUEST_CANCELLED = -32800


class RpcError(Exception):
    """An error response: raised by a request handler to answer with it, raised by `request()` when the
    peer answered with it. `data` is any msgspec-encodable value (builtins for the peer's errors)."""

    code: int
    message: str
    data: object

    def __init__(self, code: int, message: str, data: object = None) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.data = data

    def __str__(self) -> str:
        return f"{self.message} ({self.code})"

    def __repr__(self) -> str:
        return f"{type(self).__name__}(code={self.code}, message={self.message!r}, data={self.data!r})"

    @staticmethod
    def from_wire(code: int, message: str, data: object = None) -> RpcError:
        """The most specific class for the peer's error code, so callers can `except InvalidParams`."""
        cls = _BY_CODE.get(code)
        if cls is None:
            return RpcError(code, message, data)
        return cls(message, data)


class _StandardError(RpcError):
    CODE: ClassVar[int]
    DEFAULT_MESSAGE: ClassVar[str]

    def __init__(self, message: str | None = None, data: object = None) -> None:
        super().__init__(self.CODE, message if message is not None else self.DEFAULT_MESSAGE, data)


class ParseError(_StandardError):
    CODE = PARSE_ERROR
    DEFAULT_MESSAGE = "Parse error"


class InvalidRequest(_StandardError):
    CODE = INVALID_REQUEST
    DEFAULT_MESSAGE = "Invalid request"


class MethodNotFound(_StandardError):
    CODE = METHOD_NOT_FOUND
    DEFAULT_MESSAGE = "Method not found"

    @classmethod
    def for_method(cls, method: str) -> MethodNotFound:
        return cls(f"Method not found: {method}", {"method": method})


class InvalidParams(_StandardError):
    CODE = INVALID_PARAMS
    DEFAULT_MESSAGE = "Invalid params"


class InternalError(_StandardError):
    CODE = INTERNAL_ERROR
    DEFAULT_MESSAGE = "Internal error"


class RequestCancelled(_StandardError):
    CODE = REQUEST_CANCELLED
    DEFAULT_MESSAGE = "Request cancelled"


_BY_CODE: dict[int, type[_StandardError]] = {
    cls.CODE: cls
    for cls in (ParseError, InvalidRequest, MethodNotFound, InvalidParams, InternalError, RequestCancelled)
}


class ConnectionClosed(Exception):
    """The peer's stream ended or broke: no answer will come. The message explains why (the layer above
    supplies it, e.g. the process exit code and the end of its stderr)."""
