"""Validates every message our client sends against the official ACP schema.

Hook `WireCheck.record` into `AgentConnection.launch(on_message=...)`; at the end of a test call
`assert_valid()`. Outgoing params and results are checked against the exact `$defs` type their method names
(an incoming request's id tells which method our response answers), not only the loose envelope. A method
only the unstable schema has (`session/fork`, `session/set_title`, ...: `protocol/unstable_methods.py`) is
checked against the package's `schema.unstable.json`.
"""

from __future__ import annotations

import functools
import json
from typing import Any, Literal

from jsonschema import Draft202012Validator

from acp_nvim.protocol import unstable_methods
from acp_nvim.protocol.methods import METHODS
from acp_nvim.protocol.runtime import MethodSpec
from tests.conftest import SCHEMA_PATH

# The methods of the unstable schema we call (agent side) and answer (client side); the stable ones are
# checked against the stable schema.
_UNSTABLE = {
    "out": {**unstable_methods.PROTOCOL_METHODS, **unstable_methods.AGENT_METHODS},
    "answer": {**unstable_methods.PROTOCOL_METHODS, **unstable_methods.CLIENT_METHODS},
}


@functools.cache
def _unstable_schema() -> dict[str, Any]:
    return dict(json.loads(SCHEMA_PATH.with_name("schema.unstable.json").read_text()))


class WireCheck:
    def __init__(self, schema: dict[str, Any]) -> None:
        self._schema = schema
        self._incoming_methods: dict[Any, str] = {}
        self.sent: list[dict[str, Any]] = []
        self.received: list[dict[str, Any]] = []
        self.problems: list[str] = []

    @functools.cache  # noqa: B019 - one WireCheck per test; the cache dies with it
    def _validator(self, def_name: str, unstable: bool = False) -> Draft202012Validator:
        defs = (_unstable_schema() if unstable else self._schema)["$defs"]
        return Draft202012Validator({"$ref": f"#/$defs/{def_name}", "$defs": defs})

    def _check(self, def_name: str, value: Any, where: str, unstable: bool = False) -> None:
        for error in self._validator(def_name, unstable).iter_errors(value):
            schema = "unstable schema: " if unstable else ""
            self.problems.append(
                f"{where}: {schema}{def_name}: {error.message} at {list(error.absolute_path)}"
            )

    def _spec(self, method: str, kind: str) -> tuple[MethodSpec | None, bool]:
        """The method's spec, and whether it is one only the unstable schema has."""
        spec = METHODS.get(method)
        if spec is not None:
            return spec, False
        spec = _UNSTABLE[kind].get(method)
        return spec, spec is not None

    def record(self, direction: Literal["in", "out"], line: bytes) -> None:
        try:
            message = json.loads(line)
        except ValueError:
            if direction == "out":
                self.problems.append(f"we sent a line that is not JSON: {line[:200]!r}")
            return
        if direction == "in":
            self.received.append(message)
            if isinstance(message, dict) and "method" in message and "id" in message:
                self._incoming_methods[message["id"]] = message["method"]
            return
        self.sent.append(message)
        self._check_outgoing(message)

    def _check_outgoing(self, message: dict[str, Any]) -> None:
        if message.get("jsonrpc") != "2.0":
            self.problems.append(f"missing jsonrpc 2.0: {message}")
        method = message.get("method")
        if method is not None:
            spec, unstable = self._spec(method, "out")
            if spec is None:
                self.problems.append(f"we sent an unknown method {method}")
                return
            self._check(spec.params.__name__, message.get("params"), f"{method} params", unstable)
            return
        request_method = self._incoming_methods.get(message.get("id"))
        if "error" in message:
            self._check("Error", message["error"], f"error answer to {request_method}")
        elif request_method is None:
            self.problems.append(f"we answered an id the agent never sent: {message}")
        else:
            spec, unstable = self._spec(request_method, "answer")
            if spec is None or spec.result is None:
                self.problems.append(f"we answered {request_method}, which is no request of either schema")
                return
            self._check(spec.result.__name__, message.get("result"), f"{request_method} result", unstable)

    def methods_sent(self) -> list[str]:
        return [m["method"] for m in self.sent if "method" in m]

    def assert_valid(self) -> None:
        assert self.sent, "no message was sent"
        assert not self.problems, "\n".join(self.problems)
