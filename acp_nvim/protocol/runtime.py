"""The hand-written base classes the generated ``schema`` and ``methods`` modules build on.

``tools/gen_protocol.py`` writes only declarations; everything with behaviour lives here, where it is read,
type-checked and linted like the rest of the package. ``codec`` dispatches the two marker kinds.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, ClassVar, Literal

import msgspec

if TYPE_CHECKING:
    # PEP 747's type of a type expression (a Struct, a union alias, `list[X]`), which msgspec's own `Decoder`
    # and `decode` take: a union decodes typed as the union. For type checkers only (typing 3.14 has it), and
    # imported from here by every layer that names it.
    from typing_extensions import TypeForm as TypeForm


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
    # The variants, as type forms msgspec converts to (a Struct, `list[...]`).
    tagged: ClassVar[dict[str, object]] = {}
    untagged: ClassVar[tuple[object, ...]] = ()


class _ListMeta(type):
    def __instancecheck__(cls, obj: object) -> bool:
        return isinstance(obj, list)


class LenientList(metaclass=_ListMeta):
    """Runtime marker for ``list[item]`` whose invalid items ``codec`` drops (and logs) instead of failing."""

    item: ClassVar[object] = None


class _OrNoneMeta(type):
    def __instancecheck__(cls, obj: object) -> bool:
        return True  # None, or what `codec` decoded as `item`


class DefaultOnError(metaclass=_OrNoneMeta):
    """Runtime marker for an optional ``item | None`` field the schema marks
    ``x-deserialize-default-on-error``: a value that does not decode as ``item`` is dropped (and logged) by
    ``codec``, leaving ``None``, like the reference SDK. Only the unstable module uses it: an unstable field a
    stable message gains (an agent's ``sessionCapabilities.fork``) must never make the message undecodable."""

    item: ClassVar[object] = None


# "proxy": between a conductor and its proxies, only in the unstable table (`unstable_methods.PROXY_METHODS`).
Side = Literal["agent", "client", "protocol", "proxy"]


class MethodSpec(msgspec.Struct, frozen=True):
    """One method: ``side`` is who handles it ("agent": we call it; "client": we handle it;
    "protocol": both directions). ``result`` is None for notifications."""

    name: str
    params: TypeForm[object]
    result: TypeForm[object] | None
    side: Side
    is_notification: bool
