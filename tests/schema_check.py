"""Validate JSON values against one definition of the official ACP schema (shared by every test layer)."""

from __future__ import annotations

from typing import Any

import jsonschema

_validators: dict[tuple[int, str], Any] = {}
_checked: set[int] = set()


def _validator(schema: dict[str, Any], def_name: str) -> Any:
    key = (id(schema), def_name)
    validator = _validators.get(key)
    if validator is None:
        if def_name not in schema["$defs"]:
            raise KeyError(f"no definition {def_name!r} in the ACP schema")
        sub = {"$schema": schema.get("$schema"), "$ref": f"#/$defs/{def_name}", "$defs": schema["$defs"]}
        cls = jsonschema.validators.validator_for(sub)
        if id(schema) not in _checked:  # checking against the meta-schema is slow: once per schema
            cls.check_schema(sub)
            _checked.add(id(schema))
        validator = cls(sub)
        _validators[key] = validator
    return validator


def assert_valid(schema: dict[str, Any], def_name: str, value: object) -> None:
    """Fail with every schema violation (and where it is) if ``value`` is not a valid ``def_name``."""
    errors = sorted(_validator(schema, def_name).iter_errors(value), key=lambda e: list(e.absolute_path))
    if errors:
        details = "\n".join(
            f"  at {'/'.join(map(str, e.absolute_path)) or '<root>'}: {e.message}" for e in errors
        )
        raise AssertionError(f"not a valid {def_name}:\n{details}\nvalue: {value!r}")


def is_valid(schema: dict[str, Any], def_name: str, value: object) -> bool:
    return bool(_validator(schema, def_name).is_valid(value))
