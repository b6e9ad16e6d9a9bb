"""Golden round-trips: every message in the real wire transcripts decodes into its typed Struct and
re-encodes to the same JSON value (up to schema-equivalent defaults); what we re-encode is schema-valid."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import msgspec
import pytest

from acp_nvim.protocol import METHODS, codec
from acp_nvim.protocol import schema as acp
from tests.conftest import TRANSCRIPTS
from tests.schema_check import assert_valid

SEND = ">> "  # client -> agent
RECV = "<< "  # agent -> client


@dataclass
class Message:
    source: str
    direction: str
    body: dict[str, Any]
    method: str  # for a response: the method of the request it answers


def _messages() -> list[Message]:
    out: list[Message] = []
    for path in sorted(Path(TRANSCRIPTS).glob("*.txt")):
        pending: dict[tuple[str, Any], str] = {}
        for number, line in enumerate(path.read_text().splitlines(), 1):
            if line.startswith("## "):
                pending.clear()  # a new conversation: ids start again
                continue
            if not line.startswith((SEND, RECV)):
                continue
            direction = line[:3]
            try:
                body = json.loads(line[3:])
            except json.JSONDecodeError:
                continue  # probe lines that are deliberately not JSON
            source = f"{path.name}:{number}"
            if "method" in body:
                if "id" in body:
                    pending[(direction, body["id"])] = body["method"]
                out.append(Message(source, direction, body, body["method"]))
            else:
                asker = RECV if direction == SEND else SEND
                method = pending.pop((asker, body.get("id")), "")
                out.append(Message(source, direction, body, method))
    return out


MESSAGES = _messages()


def _default_like(value: Any) -> bool:
    """What a Struct default adds on re-encoding: a capability object holding only defaults."""
    return isinstance(value, dict) and all(_default_like(v) or v is False for v in value.values())


def assert_same_json(original: Any, reencoded: Any, path: str = "$") -> None:
    """Equal JSON values, except that an explicit ``false``/``null`` equal to the default may be omitted on
    re-encoding and a defaulted capability object may appear; nothing else may change or go missing."""
    if isinstance(original, dict) and isinstance(reencoded, dict):
        for key in original.keys() | reencoded.keys():
            if key not in reencoded:
                assert original[key] in (False, None), f"{path}.{key} lost: {original[key]!r}"
            elif key not in original:
                assert _default_like(reencoded[key]), f"{path}.{key} appeared: {reencoded[key]!r}"
            else:
                assert_same_json(original[key], reencoded[key], f"{path}.{key}")
    elif isinstance(original, list) and isinstance(reencoded, list):
        assert len(original) == len(reencoded), path
        for index, (a, b) in enumerate(zip(original, reencoded, strict=True)):
            assert_same_json(a, b, f"{path}[{index}]")
    else:
        assert original == reencoded and type(original) is type(reencoded), (
            f"{path}: {original!r} != {reencoded!r}"
        )


def _def_name(type_: Any) -> str:
    """The schema definition a generated type (Struct, union alias or marker) stands for."""
    return next(name for name, value in vars(acp).items() if value is type_)


def _ids(messages: list[Message]) -> list[str]:
    return [f"{m.source}-{m.method or 'response'}" for m in messages]


def test_transcripts_are_found() -> None:
    kinds = {(m.method, "id" in m.body and "method" not in m.body) for m in MESSAGES}
    assert len(MESSAGES) > 40
    assert ("session/update", False) in kinds
    assert ("session/request_permission", True) in kinds  # the answer to the agent's request


@pytest.mark.parametrize("message", MESSAGES, ids=_ids(MESSAGES))
def test_round_trip(message: Message, schema: dict[str, Any]) -> None:
    body = message.body
    spec = METHODS.get(message.method)
    raw = json.dumps(body).encode()
    if "error" in body:
        error = codec.decode(msgspec.json.encode(body["error"]), acp.Error)
        assert_same_json(body["error"], json.loads(codec.encode(error)))
        return
    if spec is None:
        pytest.skip(f"extension method {message.method!r} has no typed params")
    if "method" in body:
        params = msgspec.json.encode(body.get("params"))
        if message.method == "session/update":
            value = codec.decode_session_update(params)
            assert value is not None
        else:
            value = codec.decode(params, spec.params)
        reencoded = json.loads(codec.encode(value))
        assert_same_json(body["params"], reencoded)
        assert_valid(schema, _def_name(spec.params), reencoded)
    else:
        assert spec.result is not None, raw
        result = msgspec.json.encode(body["result"])
        if body["result"] is None and not codec._accepts_null(spec.result):
            # A Python SDK agent answers an unimplemented method with null; not a valid value there.
            with pytest.raises(msgspec.ValidationError):
                codec.decode_result(result, spec.result)
            return
        value = codec.decode_result(result, spec.result)
        reencoded = json.loads(codec.encode(value))
        assert_same_json(body["result"] if body["result"] is not None else {}, reencoded)
        assert_valid(schema, _def_name(spec.result), reencoded)
