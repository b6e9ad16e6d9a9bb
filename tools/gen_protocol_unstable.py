"""The unstable half of ``tools/gen_protocol.py``: ``acp_nvim/protocol/unstable.py``, ``unstable_methods.py``.

The npm package ships ``schema/v1/schema.unstable.json`` beside the stable schema: a superset (new methods and
types, new fields on stable types, new variants of stable unions) and the method tables of its ``unstable``
entry point (``dist/v1/unstable/schema/index.js``). Both schemas go through the same ``Generator``; what the
unstable one generates differently, or only there, is written to ``unstable.py``, which imports the rest from
``schema.py``. A name is unstable when its generated code differs from the stable one's or when it refers to
an unstable name.
"""

from __future__ import annotations

import re
import textwrap
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from gen_protocol import Field, Generator, MethodTable, MethodTypes, SchemaPackage, StructDef

UNSTABLE_RULES = """\
Stable ACP is ``acp_nvim.protocol.schema`` (and ``methods``); this module is only what the unstable schema
adds or changes, so a name here is unstable by being here (its methods: ``unstable_methods``). Use a feature
of it only when the agent advertises it (``acp_nvim.client.agent.capabilities`` reads what it advertised).
Same rules as ``schema`` (names, lenient enums and lists, unions through ``codec``), and:

- Types only in the unstable schema keep their schema name (``ForkSessionRequest``, ``SubagentUpdate``, ...).
- A stable type the unstable schema extends keeps its name here and, where it only gains fields (or holds
  such types), subclasses the stable class: ``unstable.SessionCapabilities`` is a
  ``schema.SessionCapabilities`` with ``fork``, ``title``, ... so code written for the stable type takes it.
- A stable type holding a union that gains variants (``SessionNotification``'s ``update``, the session
  requests' ``mcpServers``) is redefined, not subclassed: its field is wider than the stable one.
- A union keeps the stable variant classes and adds its new ones: ``unstable.SessionUpdate`` holds
  ``schema.SessionUpdateToolCall`` as well as ``SessionUpdateSubagentUpdate``.
- A new union with a catch-all variant (``StateUpdate``) has ``{Union}Other`` for a tag this build does not
  know, keeping it as a string; an object whose tag is a property of its own (``IdleStateUpdate``'s
  ``stopReason``) is one Struct with each variant's fields optional.
- A field the unstable schema adds and marks ``x-deserialize-default-on-error`` (``SessionCapabilities.fork``,
  ``PromptResponse.usage``, ``SubagentUpdate.state``, ...) is typed ``{Type}OrNone`` = ``Type | None``; at
  run time a ``runtime.DefaultOnError`` marker: a value that does not decode is dropped (logged) and the
  field is None, so an unstable field never makes a stable message undecodable.
"""

_NAME = re.compile(r"\b[A-Z][A-Za-z0-9]*\b")
_ALIAS = re.compile(r"^\s*([A-Za-z0-9_]+): TypeAlias = ")
_OPTIONAL = re.compile(r"^([A-Z][A-Za-z0-9]*) \| None$")


@dataclass
class Entry:
    kind: str  # primitive, known, struct, alias, untagged, lenient
    texts: tuple[str, ...]  # the generated source it compares by (a struct's without its docstring)


def entries(gen: Generator) -> dict[str, Entry]:
    """Every name a ``Generator.run`` defined, with its generated source."""
    out: dict[str, Entry] = {}

    def alias_name(line: str) -> str:
        match = _ALIAS.match(line)
        assert match is not None, line
        return match.group(1)

    for line in gen.primitive_aliases:
        out[alias_name(line)] = Entry("primitive", (line,))
    for line in gen.known_values:
        out[alias_name(line)] = Entry("known", (line.strip(),))
    for sd in gen.structs.values():
        out[sd.name] = Entry("struct", (gen.render_struct(replace(sd, doc="")),))
    for line in gen.union_aliases:
        out[alias_name(line)] = Entry("alias", (line,))
    for line, runtime in zip(gen.typing_only, gen.untagged_unions, strict=True):
        out[alias_name(line)] = Entry("untagged", (line.strip(), textwrap.dedent(runtime)))
    for line, runtime in zip(gen.lenient_typing, gen.lenient_runtime, strict=True):
        out[alias_name(line)] = Entry("lenient", (line.strip(), textwrap.dedent(runtime)))
    return out


def refs(text: str, names: dict[str, Entry], own: str) -> set[str]:
    return {n for n in _NAME.findall(text) if n in names and n != own}


class UnstableModule:
    """Which names are unstable, and how each is written (see UNSTABLE_RULES)."""

    def __init__(self, stable: Generator, unstable: Generator) -> None:
        self.stable_gen, self.gen = stable, unstable
        self.stable, self.all = entries(stable), entries(unstable)
        self.names = {n for n, e in self.all.items() if self.stable.get(n) != e}
        grew = True
        while grew:  # a name referring to an unstable one is unstable too
            more = {
                n
                for n, e in self.all.items()
                if n not in self.names and refs("".join(e.texts), self.all, n) & self.names
            }
            self.names |= more
            grew = bool(more)
        self._extends: dict[str, bool] = {}
        self.markers: dict[str, str] = {}  # `{Name}OrNone` -> Name, filled by `or_none`

    def new(self) -> list[str]:
        return [
            n for n in self.all if n in self.names and n not in self.stable and self.all[n].kind != "known"
        ]

    def changed(self) -> list[str]:
        return [n for n in self.all if n in self.names and n in self.stable and self.all[n].kind != "known"]

    def extends(self, name: str) -> bool:
        """Whether unstable ``name`` can subclass the stable class: a Struct that only gains fields, or whose
        changed fields hold such Structs (a narrower type); not one holding a union that gained variants."""
        if name in self._extends:
            return self._extends[name]
        self._extends[name] = True  # a cycle of Structs holding each other: assumed, then checked
        ok = self._can_extend(name)
        self._extends[name] = ok
        return ok

    def _can_extend(self, name: str) -> bool:
        sd, old = self.gen.structs.get(name), self.stable_gen.structs.get(name)
        if sd is None or old is None or (sd.base, sd.tag, sd.tag_field) != (old.base, old.tag, old.tag_field):
            return False
        if sd.base in self.names:
            return False
        fields = {f.json_name: f for f in sd.fields}
        for f in old.fields:
            new = fields.get(f.json_name)
            if new is None or (new.annotation, new.default) != (f.annotation, f.default):
                return False
            held = refs(f"{f.annotation} {f.default}", self.all, name) & self.names
            # A list or dict of a narrower type is no narrower for a type checker (they are invariant).
            if held and ("list[" in f.annotation or "dict[" in f.annotation):
                return False
            if not all(self.extends(n) for n in held):
                return False
        return True

    def qualify(self, text: str) -> str:
        """Names of the stable schema that are not unstable are ``schema.Name`` here."""

        def sub(match: re.Match[str]) -> str:
            n = match.group(0)
            return f"schema.{n}" if n in self.stable and n not in self.names else n

        return _NAME.sub(sub, text)

    def or_none(self, f: Field) -> Field:
        """An optional Struct or union field marked ``x-deserialize-default-on-error``, as its
        ``DefaultOnError`` marker: a value that does not decode leaves None (runtime.DefaultOnError)."""
        match = _OPTIONAL.match(f.annotation)
        if not f.default_on_error or match is None or f.default != "None":
            return f
        name = match.group(1)
        if self.all.get(name, Entry("", ())).kind not in ("struct", "alias", "untagged"):
            return f
        self.markers[f"{name}OrNone"] = name
        return replace(f, annotation=f"{name}OrNone")

    def struct_source(self, sd: StructDef) -> str:
        old_struct = self.stable_gen.structs.get(sd.name)
        old = set() if old_struct is None else {f.json_name for f in old_struct.fields}
        # The fields the unstable schema adds are lenient (as the reference SDK reads them); a stable field
        # keeps the stable decoding.
        fields = [f if f.json_name in old else self.or_none(f) for f in sd.fields]
        sd = replace(sd, fields=fields)
        if sd.name in self.stable and self.extends(sd.name):
            keep = [
                f
                for f in sd.fields
                if f.json_name not in old or refs(f"{f.annotation} {f.default}", self.all, "") & self.names
            ]
            sd = replace(sd, base=f"schema.{sd.name}", fields=keep)
        source = self.qualify(self.gen.render_struct(replace(sd, doc="")))
        if sd.doc:
            head, _, rest = source.partition("\n")
            source = f'{head}\n    """{sd.doc}"""\n{rest}'
        return source.replace(f"(schema.schema.{sd.name},", f"(schema.{sd.name},")

    def render(self, package: SchemaPackage) -> str:
        new, changed = self.new(), self.changed()
        extended = [n for n in changed if self.all[n].kind == "struct" and self.extends(n)]
        redefined = [n for n in changed if n not in extended]

        def listing(title: str, names: list[str]) -> str:
            return textwrap.fill(
                f"{title}: " + ", ".join(f"``{n}``" for n in sorted(names)) + ".", 110, break_on_hyphens=False
            )

        doc = [
            '"""ACP v1 unstable protocol types. GENERATED by tools/gen_protocol.py',
            f" from {package.stamp} (schema.unstable.json): do not edit.\n\n",
            UNSTABLE_RULES,
            "\n",
            listing("Only in the unstable schema", new),
            "\n\n",
            listing("Stable types extended here (subclasses of the stable class)", extended),
            "\n\n",
            listing("Stable types redefined here (not subclasses)", redefined),
            '\n"""\n\n',
        ]
        body: list[str] = [
            "\n#: The npm package and version whose unstable schema this module was generated from.\n",
            f"SCHEMA_PACKAGE: Final = {package.name!r}\n",
            f"SCHEMA_VERSION: Final = {package.version!r}\n",
            "\n# Scalar aliases and enums (enums stay `str`: unknown values are kept raw).\n",
        ]
        pick = [n for n in self.all if n in self.names]
        # An alias of an unstable Struct (InitializeProxyRequest) is written after the Structs.
        late = {n for n in pick if refs(self.all[n].texts[0], self.all, n) & self.names}
        primitives = [n for n in pick if self.all[n].kind == "primitive"]
        body += [self.qualify(self.all[n].texts[0]) + "\n" for n in primitives if n not in late]
        body.append("\n# The known values of the enums above, for type checkers.\nif TYPE_CHECKING:\n")
        body += [f"    {self.all[n].texts[0]}\n" for n in pick if self.all[n].kind == "known"]
        body.append("\n# Structs.\n")
        body += [
            "\n\n" + self.struct_source(sd) for sd in self.gen.ordered_structs() if sd.name in self.names
        ]
        body.append("\n# Aliases of the Structs above.\n")
        body += [self.qualify(self.all[n].texts[0]) + "\n" for n in primitives if n in late]
        body.append("\n# Tagged unions (msgspec decodes these natively).\n")
        body += [self.qualify(self.all[n].texts[0]) + "\n" for n in pick if self.all[n].kind == "alias"]
        body.append("\n# Unions msgspec cannot express: dispatched by acp_nvim.protocol.codec.\n")
        marked = [n for n in pick if self.all[n].kind in ("untagged", "lenient")]
        body.append("if TYPE_CHECKING:\n")
        body += [f"    {self.qualify(self.all[n].texts[0])}\n" for n in marked]
        body += [f"    {m}: TypeAlias = {self.qualify(n)} | None\n" for m, n in self.markers.items()]
        body.append("else:\n")
        body += [textwrap.indent(self.qualify(self.all[n].texts[1]), "    ") + "\n" for n in marked]
        body += [
            f"    class {m}(DefaultOnError):\n        item: ClassVar[Any] = {self.qualify(n)}\n\n"
            for m, n in self.markers.items()
        ]
        text = "".join(body)
        return "".join(doc) + imports(text) + text


def imports(body: str) -> str:
    """The imports the body uses (an unused one would fail the linter)."""
    typing = [n for n in ("TYPE_CHECKING", "Any", "ClassVar", "Final", "Literal", "TypeAlias") if n in body]
    msgspec_names = [n for n in ("UNSET", "UnsetType") if re.search(rf"\b{n}\b", body)]
    runtime = [
        n
        for n in ("AcpStruct", "DefaultOnError", "LenientList", "UntaggedUnion")
        if re.search(rf"\b{n}\b", body)
    ]
    out = ["from __future__ import annotations\n\n", f"from typing import {', '.join(typing)}\n\n"]
    if "msgspec." in body:
        out.append("import msgspec\n")
    if msgspec_names:
        out.append(f"from msgspec import {', '.join(msgspec_names)}\n")
    out.append("\nfrom acp_nvim.protocol import schema\n")
    if runtime:
        out.append(f"from acp_nvim.protocol.runtime import {', '.join(runtime)}\n")
    return "".join(out)


UNSTABLE_METHODS_HEADER = '''\
"""ACP v1 unstable method table. GENERATED by tools/gen_protocol.py from {stamp}.

Do not edit.

The tables of the package's ``unstable`` entry point (``dist/v1/unstable/schema/index.js``), each method with
its params and result types from ``schema.unstable.json``: the stable ones with their unstable types where the
unstable schema extends them (``initialize``'s ``unstable.InitializeResponse``). The constants name only the
methods that are not stable (``NEW_METHODS``); stable ones keep theirs in ``methods``. ``mcp/message`` is
both an agent and a client method, with different types: the tables are per side.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Final

from acp_nvim.protocol import schema, unstable
from acp_nvim.protocol.runtime import MethodSpec

if TYPE_CHECKING:
    from acp_nvim.protocol.runtime import TypeForm
'''

SIDE_TITLES = {
    "agent": ("AGENT_METHODS", "Methods handled by the agent (we call them)."),
    "client": ("CLIENT_METHODS", "Methods handled by the client (the agent calls us)."),
    "protocol": ("PROTOCOL_METHODS", "Either side may send it."),
    "proxy": ("PROXY_METHODS", "Between a conductor and its proxies (no client or agent routes them)."),
}


def render_unstable_methods(
    package: SchemaPackage,
    table: MethodTable,
    types: dict[tuple[str, str], MethodTypes],
    stable_methods: set[str],
    module: UnstableModule,
) -> str:
    out = [UNSTABLE_METHODS_HEADER.format(stamp=package.stamp)]
    new = sorted({n.method: n.constant for n in table.names if n.method not in stable_methods}.items())
    out.append("\n# The methods that are not stable.\n")
    out += [f"{constant}: Final = {method!r}\n" for method, constant in new]
    out.append(f"\nNEW_METHODS: Final = frozenset({{{', '.join(c for _, c in new)}}})\n")

    def type_ref(name: str | None) -> str:
        if name is None:
            return "None"
        return f"unstable.{name}" if name in module.names else f"schema.{name}"

    for side, (title, comment) in SIDE_TITLES.items():
        rows = [n for n in table.names if n.side == side]
        if not rows:
            continue
        out.append(f"\n# {comment}\n# method -> (params type, result type or None for a notification)\n")
        out.append(f"_{title}: Final[dict[str, tuple[TypeForm[object], TypeForm[object] | None]]] = {{\n")
        for row in sorted(rows, key=lambda r: r.method):
            spec = types[(row.method, side)]
            out.append(f"    {row.method!r}: ({type_ref(spec.params)}, {type_ref(spec.result)}),\n")
        out.append("}\n")
        out.append(
            f"{title}: Final[dict[str, MethodSpec]] = {{\n"
            f"    name: MethodSpec(name=name, params=params, result=result, side={side!r}, "
            "is_notification=result is None)\n"
            f"    for name, (params, result) in _{title}.items()\n}}\n"
        )
    return "".join(out)


def method_types_by_side(gen: Generator) -> dict[tuple[str, str], MethodTypes]:
    """(method, side) -> its types: ``mcp/message`` is a method of each side, with types of its own."""
    from gen_protocol import MethodTypes

    out: dict[tuple[str, str], MethodTypes] = {}
    for name, node in gen.defs.items():
        method = node.get("x-method")
        if not method:
            continue
        side = str(node["x-side"])
        row = out.setdefault((method, side), MethodTypes(side=side))
        if name.endswith("Response"):
            row.result = name
        else:
            row.params = name
    return out


def check_unstable_methods_agree(table: MethodTable, types: dict[tuple[str, str], MethodTypes]) -> None:
    declared = {(n.method, n.side) for n in table.names}
    problems = [
        f"{m} ({s}): in the schema, not in {table.source.name}" for m, s in sorted(set(types) - declared)
    ]
    problems += [
        f"{m} ({s}): in {table.source.name}, no params type in the schema"
        for m, s in sorted(declared)
        if (m, s) not in types or types[(m, s)].params is None
    ]
    if problems:
        raise SystemExit("the unstable method table and schema disagree:\n  " + "\n  ".join(problems))
