"""The hand-written base classes the generated ``schema`` and ``methods`` modules build on.

``tools/gen_protocol.py`` writes only declarations; everything with behaviour lives here, where it is read,
type-checked and linted like the rest of the package. ``codec`` dispatches the two marker kinds.
"""

from __future__ import annotations

from typing import Any, ClassVar, Literal

import msgspec


class AcpStruct(msgspec.Struct, kw_only=True, omit_defaults=True):
    """Base of every generated Struct."""


class _UnionMeta(type):
    # msgspec checks that a dec_hook returns an instance of the annotated type: any variant is one.
    def __instancecheck__(cls, obj: object) -> bool:
        members = [*cls.tagged.values(), *cls.untagged]  # type: ignore[attr-defined]
        return any(isinstance(obj, getattr(member, "__origin__", member)) for member in members)


class UntaggedUnion(metaclass=_UnionMeta):
    """Runtime marker for a union msgspec cannot decode natively; ``codec`` dispatches it."""

    tag_field: ClassVar[str | None] = None
    tagged: ClassVar[dict[str, Any]] = {}
    untagged: ClassVar[tuple[Any, ...]] = ()


class _ListMeta(type):
    def __instancecheck__(cls, obj: object) -> bool:
        return isinstance(obj, list)


class LenientList(metaclass=_ListMeta):
    """Runtime marker for ``list[item]`` whose invalid items ``codec`` drops (and logs) instead of failing."""

    item: ClassVar[Any] = None


Side = Literal["agent", "client", "protocol"]


class MethodSpec(msgspec.Struct, frozen=True):
    """One method: ``side`` is who handles it ("agent": we call it; "client": we handle it;
    "protocol": both directions). ``result`` is None for notifications."""

    name: str
    params: Any
    result: Any
    side: Side
    is_notification: bool
