"""Generate ``acp_nvim/protocol/schema.py`` and ``methods.py`` from the official ACP v1 npm package (and
``unstable.py`` with ``unstable_methods.py`` from its unstable schema: ``tools/gen_protocol_unstable.py``).

Usage: ``python tools/gen_protocol.py [--schema PATH] [--output PATH] [--methods-output PATH] [--check]``.
The schema (``schema/v1/schema.json``) gives the msgspec Structs and each method's types; the package's
compiled method tables (``dist/v1/schema/index.js``) give the method names and sides; its ``package.json``
gives the name and version stamped on both modules. Their behaviour lives in the hand-written
``acp_nvim/protocol/runtime.py``: the generated modules only declare.
``--check`` regenerates in memory and exits 1 when a committed file differs.
The output goes through ``ruff format`` so it is byte-for-byte deterministic and formatter-clean.
"""

from __future__ import annotations

import argparse
import json
import keyword
import re
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from generated_files import write_or_check

if TYPE_CHECKING:
    from gen_protocol_unstable import UnstableModule

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_SCHEMA = (
    ROOT / "tests" / "peers" / "node_modules" / "acp-sdk-schema" / "schema" / "v1" / "schema.json"
)
DEFAULT_OUTPUT = ROOT / "acp_nvim" / "protocol" / "schema.py"
DEFAULT_METHODS_OUTPUT = ROOT / "acp_nvim" / "protocol" / "methods.py"

JsonObj = dict[str, Any]

# The body of schema.py's docstring, under a first line that carries the package stamp.
SCHEMA_RULES = """\
Rules of the generator (so code can be written against the names without reading it):

- Class and alias names are the schema's ``$defs`` names verbatim. Attributes are snake_case; the JSON keys
  stay camelCase through ``msgspec.field(name=...)``; ``_meta`` is the attribute ``meta``.
- Every Struct is keyword-only with ``omit_defaults=True``: an optional field left at its default is not sent.
  Optional fields default to ``None`` (omitted), to the schema's default, or, where the schema gives ``null``
  a meaning of its own ("set to null to clear"), to ``msgspec.UNSET`` so that ``None`` is sent as ``null``.
- String enums (ToolKind, ToolCallStatus, StopReason, ...) are typed ``str`` so an unknown value from a newer
  peer decodes and is kept as the raw string; the known values are the ``Known<Name>`` Literal alias, defined
  for type checkers only (``if TYPE_CHECKING``).
- A tagged variant (a oneOf item = ``$ref X`` + const tag T) is the subclass ``{Union}{CamelCase(T)}(X)``
  carrying tag T, e.g. ``SessionUpdateToolCall(ToolCall)``, ``ContentBlockText(TextContent)``; when that name
  is X itself (``McpServerHttp``) X carries the tag. Variants of an object with its own properties (e.g.
  ``SessionConfigOption``) also carry those properties. The union alias keeps the schema name.
- Catch-all variants for unknown tags (``not: {...}``) are not generated: an unknown tag is a decode error
  there, except for ``SessionUpdate``, which ``codec.decode_session_update`` skips.
- Unions mixing tagged and untagged variants (``McpServer``: stdio has no ``type``; ``AuthMethod``: agent has
  no ``type``) and untagged unions of objects cannot be msgspec unions. Type checkers see the plain union;
  at runtime the name is an ``UntaggedUnion`` marker class that ``acp_nvim.protocol.codec`` decodes through
  its ``dec_hook`` (the tag picks the variant; without a known tag, the untagged variants are tried in schema
  order). Always decode through ``codec``: a bare ``msgspec.json.Decoder`` rejects these marker types.
- Arrays of unions marked ``x-deserialize-skip-invalid-items`` (``configOptions``, tool-call ``content``,
  ``authMethods``, ...) are typed ``<Item>List`` = ``list[<Item>]``; at runtime a ``LenientList`` marker that
  ``codec`` decodes item by item, dropping (and logging) items it cannot decode, like the reference SDK.
"""

SCHEMA_IMPORTS = """\
from __future__ import annotations

from typing import TYPE_CHECKING, Any, ClassVar, Final, Literal, TypeAlias

import msgspec
from msgspec import UNSET, UnsetType

from acp_nvim.protocol.runtime import AcpStruct, LenientList, UntaggedUnion
"""

TRI_STATE = re.compile(r"null to clear", re.IGNORECASE)


def snake(name: str) -> str:
    if name == "_meta":
        return "meta"
    out = re.sub(r"(?<=[a-z0-9])([A-Z])", r"_\1", name).lower()
    out = re.sub(r"[^a-z0-9_]", "_", out)
    if keyword.iskeyword(out):
        out += "_"
    return out


def camel(tag: str) -> str:
    return "".join(part[:1].upper() + part[1:] for part in re.split(r"[_\-/ .]", tag) if part)


def ref_name(node: JsonObj) -> str | None:
    if "$ref" in node:
        return str(node["$ref"]).rsplit("/", 1)[-1]
    all_of = node.get("allOf")
    if isinstance(all_of, list) and len(all_of) == 1 and "$ref" in all_of[0]:
        return str(all_of[0]["$ref"]).rsplit("/", 1)[-1]
    return None


def first_paragraph(text: str | None) -> str:
    if not text:
        return ""
    para = text.strip().split("\n\n", 1)[0]
    return " ".join(para.split()).replace("\\", "\\\\").replace('"""', '\\"\\"\\"')


@dataclass
class Field:
    json_name: str
    annotation: str
    default: str | None  # Python source of the default, None when required
    # Marked `x-deserialize-default-on-error`: only the unstable module acts on it (gen_protocol_unstable.py).
    default_on_error: bool = False


@dataclass
class StructDef:
    name: str
    base: str = "AcpStruct"
    fields: list[Field] = field(default_factory=list)
    tag: str | None = None
    tag_field: str | None = None
    doc: str = ""


@dataclass
class Variant:
    tag: str | None
    ref: str | None
    inline: JsonObj  # inline properties besides the tag
    required: list[str]


class Generator:
    def __init__(self, schema: JsonObj, open_unions: frozenset[str] = frozenset()) -> None:
        self.defs: dict[str, JsonObj] = schema["$defs"]
        # Unions whose catch-all variant (``not: {...}``) becomes ``{Name}Other``, keeping an unknown tag (the
        # unstable module's new unions: see UNSTABLE_RULES in tools/gen_protocol_unstable.py).
        self.open_unions = open_unions
        self.primitive_aliases: list[str] = []
        self.known_values: list[str] = []
        self.structs: dict[str, StructDef] = {}
        self.union_aliases: list[str] = []
        self.untagged_unions: list[str] = []
        self.typing_only: list[str] = []
        self.lenient_lists: set[str] = set()
        # Emitted after the unions they hold.
        self.lenient_typing: list[str] = []
        self.lenient_runtime: list[str] = []
        # Defs whose variants get the tag put on the def itself (see SCHEMA_RULES).
        self.self_tagged: dict[str, tuple[str, str]] = {}

    # ---------------------------------------------------------------- types
    def type_of(self, node: JsonObj) -> str:
        """Python annotation for a property schema, including ``None`` when null is allowed."""
        name = ref_name(node)
        if name is not None:
            return name
        for key in ("anyOf", "oneOf"):
            if key in node:
                parts: list[str] = []
                for item in node[key]:
                    t = self.type_of(item)
                    if t not in parts:
                        parts.append(t)
                if "None" in parts:
                    parts = [p for p in parts if p != "None"] + ["None"]
                return " | ".join(parts)
        typ = node.get("type")
        if isinstance(typ, list):
            parts = [self.type_of({**node, "type": t}) for t in typ]
            if "None" in parts:
                parts = [p for p in parts if p != "None"] + ["None"]
            return " | ".join(parts)
        if typ == "null":
            return "None"
        if typ == "string":
            return "str"
        if typ == "integer":
            return "int"
        if typ == "number":
            return "float"
        if typ == "boolean":
            return "bool"
        if typ == "array":
            return f"list[{self.type_of(node.get('items', {}))}]"
        if typ == "object":
            extra = node.get("additionalProperties")
            if isinstance(extra, dict) and extra:
                return f"dict[str, {self.type_of(extra)}]"
            return "dict[str, Any]"
        return "Any"

    def lenient_list(self, node: JsonObj) -> str | None:
        """Marker name for an array whose invalid items are dropped (``x-deserialize-skip-invalid-items``).

        Only arrays of unions get it: that is where a newer peer sends variants this build cannot know
        (a config option ``type``, a tool-call content ``type``); a plain list keeps msgspec's speed.
        """
        items = node.get("items", {})
        item = ref_name(items) if isinstance(items, dict) else None
        if not node.get("x-deserialize-skip-invalid-items") or item is None or self.kind_of(item) != "union":
            return None
        name = f"{item}List"
        if name not in self.lenient_lists:
            self.lenient_lists.add(name)
            self.lenient_typing.append(f"    {name}: TypeAlias = list[{item}]")
            self.lenient_runtime.append(
                f"    class {name}(LenientList):\n        item: ClassVar[Any] = {item}\n"
            )
        return name

    def make_field(self, json_name: str, node: JsonObj, required: bool) -> Field:
        ann = self.type_of(node)
        lenient = self.lenient_list(node)
        if lenient is not None:
            ann = ann.replace(f"list[{lenient[: -len('List')]}]", lenient)
        if required:
            return Field(json_name, ann, None)
        if TRI_STATE.search(node.get("description", "")):
            return Field(json_name, ann.replace(" | None", "") + " | UnsetType | None", "UNSET")
        if "default" in node:
            return Field(json_name, ann, self.default_source(node, node["default"]))
        if ann == "Any":
            return Field(json_name, ann, "None")
        if not ann.endswith("| None") and ann != "None":
            ann = f"{ann} | None"
        return Field(
            json_name, ann, "None", default_on_error=bool(node.get("x-deserialize-default-on-error"))
        )

    def default_source(self, node: JsonObj, value: Any) -> str:
        if isinstance(value, list):
            if value:
                raise SystemExit(f"unsupported non-empty list default {value!r}")
            return "msgspec.field(default_factory=list)"
        if isinstance(value, dict):
            name = ref_name(node)
            if name is not None and name in self.defs and self.kind_of(name) == "struct":
                return f"msgspec.field(default_factory=lambda: {name}())"
            if value:
                raise SystemExit(f"unsupported object default {value!r}")
            return "msgspec.field(default_factory=dict)"
        return repr(value)

    def object_fields(
        self, node: JsonObj, *, all_optional: bool = False, skip: str | None = None
    ) -> list[Field]:
        required = set(node.get("required", []))
        out = []
        for json_name, prop in node.get("properties", {}).items():
            if json_name == skip:
                continue
            out.append(self.make_field(json_name, prop, json_name in required and not all_optional))
        return out

    # ------------------------------------------------------------ variants
    def variants(self, node: JsonObj) -> list[Variant]:
        items = node.get("oneOf") or node.get("anyOf") or []
        out = []
        for item in items:
            if "not" in item:
                continue  # catch-all for unknown tags: see SCHEMA_RULES
            props = dict(item.get("properties", {}))
            tag = None
            for key, prop in list(props.items()):
                if "const" in prop and isinstance(prop["const"], str):
                    tag = (key, prop["const"])
                    del props[key]
            out.append(
                Variant(
                    tag=None if tag is None else tag[1],
                    ref=ref_name(item),
                    inline=props,
                    required=[r for r in item.get("required", []) if tag is None or r != tag[0]],
                )
            )
        return out

    def tag_field_of(self, node: JsonObj) -> str | None:
        for item in node.get("oneOf") or node.get("anyOf") or []:
            for key, prop in item.get("properties", {}).items():
                if "const" in prop:
                    return str(key)
        return None

    def kind_of(self, name: str) -> str:
        node = self.defs[name]
        alts = node.get("oneOf") or node.get("anyOf")
        if alts is None:
            if node.get("type") == "object" or "properties" in node:
                return "struct"
            return "primitive"
        if all(
            "const" in a or (a.get("type") in ("string", "integer") and "properties" not in a) for a in alts
        ):
            return "enum"
        if all(a.get("type") not in ("object", None) for a in alts):
            # msgspec cannot tell two array types apart: those go through the codec's dispatch.
            arrays = sum(1 for a in alts if a.get("type") == "array")
            return "union" if arrays > 1 else "primitive"
        if "properties" in node and all(v.tag is None and v.ref for v in self.variants(node)):
            return "struct"  # object with an untagged "scope" choice: merged, see emit_struct
        if self.tag_field_of(node) in node.get("properties", {}):
            return "struct"  # its tag is a property of its own (IdleStateUpdate's stopReason): merged too
        return "union"

    # ---------------------------------------------------------------- emit
    def run(self, package: SchemaPackage) -> str:
        skipped = {n for n, d in self.defs.items() if d.get("x-docs-ignore")}
        self.prescan()
        for name, node in self.defs.items():
            if name in skipped:
                continue
            kind = self.kind_of(name)
            if kind == "enum":
                self.emit_enum(name, node)
            elif kind == "primitive":
                self.primitive_aliases.append(f"{name}: TypeAlias = {self.type_of(node)}")
            elif kind == "struct":
                self.emit_struct(name, node)
            else:
                self.emit_union(name, node)
        return self.render(package)

    def prescan(self) -> None:
        for name, node in self.defs.items():
            if node.get("x-docs-ignore") or self.kind_of(name) != "union" or node.get("properties"):
                continue
            tag_field = self.tag_field_of(node)
            for v in self.variants(node):
                if v.tag is not None and v.ref == f"{name}{camel(v.tag)}" and tag_field and not v.inline:
                    self.self_tagged[v.ref] = (v.tag, tag_field)

    def emit_enum(self, name: str, node: JsonObj) -> None:
        alts = node.get("oneOf") or node.get("anyOf") or []
        consts = [a["const"] for a in alts if "const" in a]
        base = "int" if any(a.get("type") == "integer" for a in alts) else "str"
        self.primitive_aliases.append(f"{name}: TypeAlias = {base}")
        literal = ", ".join(json.dumps(c) for c in consts)
        self.known_values.append(f"    Known{name}: TypeAlias = Literal[{literal}]")

    def emit_struct(self, name: str, node: JsonObj) -> None:
        fields = self.object_fields(node)
        # An untagged choice inside an object (ElicitationFormMode's session/request scope): every
        # alternative's properties become optional fields, since anyOf allows any combination.
        # A choice tagged by a property of the object's own (IdleStateUpdate's stopReason) is merged the same
        # way: the tag stays the plain (lenient) property, each variant adds its own as optional fields.
        for v in self.variants(node):
            have = {f.json_name for f in fields}
            extra = self.object_fields({"properties": v.inline}, all_optional=True)
            if v.ref is not None:
                extra = self.object_fields(self.defs[v.ref], all_optional=True) + extra
            fields += [f for f in extra if f.json_name not in have]
        tag, tag_field = self.self_tagged.get(name, (None, None))
        self.structs[name] = StructDef(
            name, fields=fields, tag=tag, tag_field=tag_field, doc=first_paragraph(node.get("description"))
        )

    def struct_fields(self, name: str) -> list[Field]:
        """All fields of a generated struct, inherited ones included."""
        sd = self.structs.get(name)
        if sd is None:
            return self.object_fields(self.defs[name])
        inherited = [] if sd.base == "AcpStruct" else self.struct_fields(sd.base)
        return inherited + sd.fields

    def emit_union(self, name: str, node: JsonObj) -> None:
        tag_field = self.tag_field_of(node)
        base_fields = self.object_fields(node)
        members: list[str] = []
        tagged: dict[str, str] = {}
        untagged: list[str] = []
        for index, v in enumerate(self.variants(node)):
            inline = self.object_fields({"properties": v.inline, "required": v.required})
            if v.tag is not None:
                cls = f"{name}{camel(v.tag)}"
                if cls != v.ref:
                    base = v.ref or "AcpStruct"
                    have = {f.json_name for f in self.struct_fields(v.ref)} if v.ref else set()
                    extra = [f for f in base_fields + inline if f.json_name not in have]
                    self.structs[cls] = StructDef(
                        cls, base=base, fields=extra, tag=v.tag, tag_field=tag_field
                    )
                tagged[v.tag] = cls
                members.append(cls)
            elif v.ref is not None and not base_fields and not inline:
                untagged.append(v.ref)
                members.append(v.ref)
            elif v.ref is None and v.inline:
                cls = name + "".join(camel(k) for k in v.required or list(v.inline)) or f"{name}{index}"
                self.structs[cls] = StructDef(cls, fields=base_fields + inline)
                untagged.append(cls)
                members.append(cls)
            else:
                t = self.type_of({k: val for k, val in (node.get("oneOf") or node["anyOf"])[index].items()})
                untagged.append(t)
                members.append(t)
        catch_all = any("not" in item for item in node.get("oneOf") or node.get("anyOf") or [])
        if name in self.open_unions and catch_all and tag_field is not None:
            cls = f"{name}Other"
            self.structs[cls] = StructDef(
                cls,
                fields=[Field(tag_field, "str", None), *base_fields],
                doc=f"A `{tag_field}` this build does not know.",
            )
            untagged.append(cls)
            members.append(cls)
        alias = " | ".join(members)
        if len(members) == 1 or not untagged:
            self.union_aliases.append(f"{name}: TypeAlias = {alias}")
        else:
            tagged_src = ", ".join(f"{json.dumps(t)}: {c}" for t, c in tagged.items())
            untagged_src = "".join(f"{u}, " for u in untagged)
            self.typing_only.append(f"    {name}: TypeAlias = {alias}")
            self.untagged_unions.append(
                f"    class {name}(UntaggedUnion):\n"
                f"        tag_field: ClassVar[str | None] = {tag_field!r}\n"
                f"        tagged: ClassVar[dict[str, Any]] = {{{tagged_src}}}\n"
                f"        untagged: ClassVar[tuple[Any, ...]] = ({untagged_src})\n"
            )

    def ordered_structs(self) -> Iterator[StructDef]:
        done: set[str] = set()

        def visit(sd: StructDef) -> Iterator[StructDef]:
            if sd.name in done:
                return
            if sd.base in self.structs:
                yield from visit(self.structs[sd.base])
            done.add(sd.name)
            yield sd

        for sd in self.structs.values():
            yield from visit(sd)

    def render_struct(self, sd: StructDef) -> str:
        # kw_only is not inherited by msgspec subclasses; it lets a variant add required fields.
        head = f"{sd.base}, kw_only=True"
        if sd.tag is not None:
            head += f", tag={sd.tag!r}, tag_field={sd.tag_field!r}"
        lines = [f"class {sd.name}({head}):"]
        if sd.doc:
            lines.append(f'    """{sd.doc}"""')
        # Required fields first keeps the signature readable; kw_only makes the order free otherwise.
        ordered = [f for f in sd.fields if f.default is None] + [
            f for f in sd.fields if f.default is not None
        ]
        for f in ordered:
            attr = snake(f.json_name)
            default = f.default
            if attr != f.json_name:
                if default is None:
                    default = f"msgspec.field(name={f.json_name!r})"
                elif default.startswith("msgspec.field("):
                    default = default.replace("msgspec.field(", f"msgspec.field(name={f.json_name!r}, ", 1)
                else:
                    default = f"msgspec.field(name={f.json_name!r}, default={default})"
            lines.append(f"    {attr}: {f.annotation}" + ("" if default is None else f" = {default}"))
        if len(lines) == 1:
            lines.append("    pass")
        return "\n".join(lines) + "\n"

    def render(self, package: SchemaPackage) -> str:
        out = [
            '"""ACP v1 protocol types. GENERATED by tools/gen_protocol.py',
            f" from {package.stamp}: do not edit.\n\n",
            SCHEMA_RULES,
            '"""\n\n',
            SCHEMA_IMPORTS,
            "\n#: The npm package and version whose schema this module was generated from.\n",
            f"SCHEMA_PACKAGE: Final = {package.name!r}\n",
            f"SCHEMA_VERSION: Final = {package.version!r}\n",
            "\n# Scalar aliases and enums (enums stay `str`: unknown values are kept raw).\n",
        ]
        out += [line + "\n" for line in self.primitive_aliases]
        # Building a typing.Literal costs ~0.2 M instructions; nothing needs these at run time.
        out.append("\n# The known values of the enums above, for type checkers.\nif TYPE_CHECKING:\n")
        out += [line + "\n" for line in self.known_values]
        out.append("\n# Structs.\n")
        out += ["\n\n" + self.render_struct(sd) for sd in self.ordered_structs()]
        out.append("\n# Tagged unions (msgspec decodes these natively).\n")
        out += [line + "\n" for line in self.union_aliases]
        out.append("\n# Unions msgspec cannot express: dispatched by acp_nvim.protocol.codec.\n")
        out.append("if TYPE_CHECKING:\n")
        out += [line + "\n" for line in self.typing_only + self.lenient_typing]
        out.append("else:\n")
        out += [src + "\n" for src in self.untagged_unions + self.lenient_runtime]
        return "".join(out)

    def method_types(self) -> dict[str, MethodTypes]:
        """Method name -> its side, params and result types, from the schema's x-method/x-side annotations."""
        out: dict[str, MethodTypes] = {}
        for name, node in self.defs.items():
            method = node.get("x-method")
            if not method:
                continue
            row = out.setdefault(method, MethodTypes(side=str(node["x-side"])))
            if name.endswith("Response"):
                row.result = name
            else:
                row.params = name
        return out


@dataclass
class MethodTypes:
    side: str
    params: str | None = None
    result: str | None = None


@dataclass(frozen=True)
class SchemaPackage:
    """The npm package a schema file ships in; its name and version are stamped on the generated code."""

    name: str
    version: str
    root: Path

    @property
    def stamp(self) -> str:
        return f"{self.name}@{self.version}"


def package_of(schema_path: Path) -> SchemaPackage:
    for folder in schema_path.resolve().parents:
        manifest = folder / "package.json"
        if manifest.is_file():
            data = json.loads(manifest.read_text())
            return SchemaPackage(str(data["name"]), str(data["version"]), folder)
    raise SystemExit(
        f"{schema_path} is not inside an npm package (no package.json above it): run scripts/setup"
    )


@dataclass(frozen=True)
class MethodName:
    constant: str  # the Python name: the npm table's key, upper-cased
    method: str
    side: str


@dataclass(frozen=True)
class MethodTable:
    """What the npm package declares of the methods: ``AGENT_METHODS``, ``CLIENT_METHODS``, ...."""

    source: Path
    protocol_version: int
    names: tuple[MethodName, ...]


TABLE_SIDES = {"AGENT": "agent", "CLIENT": "client", "PROTOCOL": "protocol", "PROXY": "proxy"}
TABLE_START = re.compile(r"export const (AGENT|CLIENT|PROTOCOL|PROXY)_METHODS = \{")
TABLE_ROW = re.compile(r'\s+([a-z][a-z0-9_]*): "([^"\\]+)",?')
TABLE_VERSION = re.compile(r"export const PROTOCOL_VERSION = (\d+);")


def method_table(package: SchemaPackage, schema_path: Path, feature_set: str = "") -> MethodTable:
    """Read the method tables the package's compiled schema module exports (``dist/v1/schema/index.js``;
    with ``feature_set="unstable"``, ``dist/v1/unstable/schema/index.js``).

    The file is generated by the SDK's own build, so its shape is fixed; anything unexpected inside a table
    stops the generator rather than dropping a method silently.
    """
    source = package.root / "dist" / schema_path.parent.name / feature_set / "schema" / "index.js"
    if not source.is_file():
        raise SystemExit(f"{package.stamp} has no method table at {source}")
    names: list[MethodName] = []
    version: int | None = None
    side: str | None = None
    for number, line in enumerate(source.read_text().splitlines(), 1):
        if side is not None:
            if line.strip() == "};":
                side = None
            elif row := TABLE_ROW.fullmatch(line):
                names.append(MethodName(row.group(1).upper(), row.group(2), side))
            else:
                raise SystemExit(f"{source}:{number}: unexpected line in a method table: {line!r}")
        elif start := TABLE_START.fullmatch(line):
            side = TABLE_SIDES[start.group(1)]
        elif found := TABLE_VERSION.fullmatch(line):
            version = int(found.group(1))
    if side is not None or version is None or not names:
        raise SystemExit(f"{source}: no complete AGENT/CLIENT/PROTOCOL_METHODS tables and PROTOCOL_VERSION")
    return MethodTable(source, version, tuple(names))


def check_methods_agree(table: MethodTable, types: dict[str, MethodTypes]) -> None:
    """The package's method table and the schema's x-method annotations must name the same methods."""
    problems = []
    declared = {n.method: n for n in table.names}
    for method in sorted(set(types) - set(declared)):
        problems.append(f"{method}: in the schema, not in {table.source.name}")
    for name in table.names:
        row = types.get(name.method)
        if row is None:
            problems.append(f"{name.method}: in {table.source.name}, no x-method type in the schema")
        elif row.side != name.side:
            problems.append(f"{name.method}: x-side {row.side!r} in the schema, {name.side!r} in the table")
        elif row.params is None:
            problems.append(f"{name.method}: the schema has a response type and no params type")
    if problems:
        raise SystemExit("the method table and the schema disagree:\n  " + "\n  ".join(problems))


METHODS_HEADER = '''\
"""ACP v1 method table. GENERATED by tools/gen_protocol.py from {stamp}: do not edit.

Who handles each method, its params and result types (no I/O). The names and sides are the package's
``AGENT_METHODS``, ``CLIENT_METHODS`` and ``PROTOCOL_METHODS``; the params and result types are the schema's
``x-method`` types, so a method added upstream appears here on regeneration.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Final

from acp_nvim.protocol import schema
from acp_nvim.protocol.runtime import MethodSpec as MethodSpec
from acp_nvim.protocol.runtime import Side as Side

if TYPE_CHECKING:
    from acp_nvim.protocol.runtime import TypeForm

#: The protocol version this client speaks (sent in ``initialize``).
PROTOCOL_VERSION: Final = {version}
'''

METHODS_FOOTER = """
METHODS: Final[dict[str, MethodSpec]] = {
    name: MethodSpec(name=name, params=params, result=result, side=side, is_notification=result is None)
    for name, (params, result, side) in _TABLE.items()
}

AGENT_METHODS: Final = frozenset(n for n, m in METHODS.items() if m.side == "agent")
CLIENT_METHODS: Final = frozenset(n for n, m in METHODS.items() if m.side == "client")
"""

SIDE_COMMENTS = {
    "agent": "Methods handled by the agent (we call them).",
    "client": "Methods handled by the client (the agent calls us).",
    "protocol": "Either side may send it.",
}


def render_methods(package: SchemaPackage, table: MethodTable, types: dict[str, MethodTypes]) -> str:
    out = [METHODS_HEADER.format(stamp=package.stamp, version=table.protocol_version)]
    side = None
    for name in table.names:
        if name.side != side:
            side = name.side
            out.append(f"\n# {SIDE_COMMENTS[side]}\n")
        out.append(f"{name.constant}: Final = {name.method!r}\n")
    declared = {n.method: n for n in table.names}
    # A compact table and one comprehension: this module is compiled at every start when bytecode is off.
    out.append("\n# method -> (params type, result type or None for a notification, side that handles it)\n")
    out.append("_TABLE: Final[dict[str, tuple[TypeForm[object], TypeForm[object] | None, Side]]] = {\n")
    for method in sorted(declared):
        name, row = declared[method], types[method]
        result = "None" if row.result is None else f"schema.{row.result}"
        out.append(f"    {name.constant}: (schema.{row.params}, {result}, {name.side!r}),\n")
    out.append("}\n")
    out.append(METHODS_FOOTER)
    return "".join(out)


def ruff_format(source: str, path: Path) -> str:
    ruff = Path(sys.executable).parent / "ruff"
    cmd = [str(ruff) if ruff.exists() else "ruff", "format", "--stdin-filename", str(path), "-"]
    proc = subprocess.run(cmd, input=source, capture_output=True, text=True, cwd=ROOT, check=False)
    if proc.returncode != 0:
        raise SystemExit(f"ruff format failed on the generated code:\n{proc.stderr}")
    return proc.stdout


def generate(schema_path: Path, output: Path, methods_output: Path) -> dict[Path, str]:
    """The generated modules' text, by path: the stable ones, and the unstable ones beside them."""
    schema = json.loads(schema_path.read_text())
    package = package_of(schema_path)
    generator = Generator(schema)
    schema_code = generator.run(package)
    types = generator.method_types()
    table = method_table(package, schema_path)
    check_methods_agree(table, types)
    outputs = {
        output: ruff_format(schema_code, output),
        methods_output: ruff_format(render_methods(package, table, types), methods_output),
    }
    if not schema_path.with_name("schema.unstable.json").is_file() and schema_path != DEFAULT_SCHEMA:
        return outputs  # a package copy with the stable schema only (the generator's own tests)
    return outputs | generate_unstable(schema_path, generator, package, set(types), output.parent)


def unstable_module(schema_path: Path, stable: Generator, package: SchemaPackage) -> UnstableModule | None:
    """What the ``schema.unstable.json`` beside ``schema_path`` adds to the stable schema (``stable`` has
    run); None without one."""
    from gen_protocol_unstable import UnstableModule

    unstable_path = schema_path.with_name("schema.unstable.json")
    if not unstable_path.is_file():
        return None
    schema = json.loads(unstable_path.read_text())
    generator = Generator(schema, open_unions=frozenset(schema["$defs"]) - frozenset(stable.defs))
    generator.run(package)
    return UnstableModule(stable, generator)


def generate_unstable(
    schema_path: Path, stable: Generator, package: SchemaPackage, stable_methods: set[str], folder: Path
) -> dict[Path, str]:
    """``unstable.py`` and ``unstable_methods.py`` from the ``schema.unstable.json`` beside the stable one."""
    from gen_protocol_unstable import (
        check_unstable_methods_agree,
        method_types_by_side,
        render_unstable_methods,
    )

    unstable_path = schema_path.with_name("schema.unstable.json")
    module = unstable_module(schema_path, stable, package)
    if module is None:
        raise SystemExit(f"{package.stamp} has no unstable schema at {unstable_path}")
    generator = module.gen
    types = method_types_by_side(generator)
    table = method_table(package, unstable_path, "unstable")
    check_unstable_methods_agree(table, types)
    code = module.render(package)
    methods_code = render_unstable_methods(package, table, types, stable_methods, module)
    return {
        folder / "unstable.py": ruff_format(code, folder / "unstable.py"),
        folder / "unstable_methods.py": ruff_format(methods_code, folder / "unstable_methods.py"),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--schema", type=Path, default=DEFAULT_SCHEMA)
    parser.add_argument("--output", type=Path, default=DEFAULT_OUTPUT)
    parser.add_argument("--methods-output", type=Path, default=DEFAULT_METHODS_OUTPUT)
    parser.add_argument("--check", action="store_true", help="exit 1 if an output file is not current")
    args = parser.parse_args(argv)
    outputs = generate(args.schema, args.output, args.methods_output)
    return write_or_check(
        outputs,
        args.check,
        lambda path: f"{path} is out of date with {args.schema}; run: python tools/gen_protocol.py",
    )


if __name__ == "__main__":
    sys.exit(main())
