"""Validates every message our client sends against the official ACP schema.

Hook `WireCheck.record` into `AgentConnection.launch(on_message=...)`; at the end of a test call
`assert_valid()`. Outgoing params and results are checked against the exact `$defs` type their method names
(an incoming request's id tells which method our response answers), not only the loose envelope.
"""

from __future__ import annotations

import functools
import json
from typing import Any, Literal

from jsonschema import Draft202012Validator

from acp_nvim.protocol.methods import METHODS


class WireCheck:
    def __init__(self, schema: dict[str, Any]) -> None:
        self._schema = schema
        self._incoming_methods: dict[Any, str] = {}
        self.sent: list[dict[str, Any]] = []
        self.received: list[dict[str, Any]] = []
        self.problems: list[str] = []

    @functools.cache  # noqa: B019 - one WireCheck per test; the cache dies with it
    def _validator(self, def_name: str) -> Draft202012Validator:
        return Draft202012Validator({"$ref": f"#/$defs/{def_name}", "$defs": self._schema["$defs"]})

    def _check(self, def_name: str, value: Any, where: str) -> None:
        for error in self._validator(def_name).iter_errors(value):
            self.problems.append(f"{where}: {def_name}: {error.message} at {list(error.absolute_path)}")

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
            spec = METHODS.get(method)
            if spec is None:
                self.problems.append(f"we sent an unknown method {method}")
                return
            self._check(spec.params.__name__, message.get("params"), f"{method} params")
            return
        request_method = self._incoming_methods.get(message.get("id"))
        if "error" in message:
            self._check("Error", message["error"], f"error answer to {request_method}")
        elif request_method is None:
            self.problems.append(f"we answered an id the agent never sent: {message}")
        else:
            spec = METHODS[request_method]
            self._check(spec.result.__name__, message.get("result"), f"{request_method} result")

    def methods_sent(self) -> list[str]:
        return [m["method"] for m in self.sent if "method" in m]

    def assert_valid(self) -> None:
        assert self.sent, "no message was sent"
        assert not self.problems, "\n".join(self.problems)
