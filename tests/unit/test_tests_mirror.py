"""The unit tests mirror the source tree (issue 25): the tests of `acp_nvim/<layer>/<sub>/<module>.py` are in
`tests/unit/<layer>/<sub>/test_<module>.py`, so a module's tests are found by its path and a moved module
shows its stale tests here.

A file may test one aspect of its module apart, `test_<module>_<aspect>.py`
(`tests/unit/jsonrpc/test_connection_properties.py`, `tests/unit/client/session/test_state_chunk_runs.py`); it
still names a module of its folder. At the top sit the tests of the package's own modules
(`acp_nvim/probe.py`) and the checks that read the whole repository, or no one module, each listed below with
why. Helpers beside the tests (`fakes.py`, `strategies.py`) are not tests and are not checked.
"""

from __future__ import annotations

from pathlib import Path

from tests.conftest import ROOT

UNIT = ROOT / "tests" / "unit"
PACKAGE = ROOT / "acp_nvim"

# The tests at the top of tests/unit: each checks the repository across modules, not one module.
CROSS_CUTTING: dict[str, str] = {
    "test_any_budget.py": "the lines naming typing.Any in all hand-written Python",
    "test_boundary.py": "the Python<->Lua boundary: lua_api.py, host/api.lua, the rplugin against each other",
    "test_current_session_owner.py": "no Lua file but ui/status.lua assigns the current session",
    "test_doc_paths.py": "every path the docs and comments name exists",
    "test_layers.py": "every Python module's imports, and the size of each",
    "test_lua_layers.py": "every Lua require against the Lua layers",
    "test_lua_layout.py": "every Lua require resolves; commands and highlight groups in their one module",
    "test_protocol_transcripts.py": "recorded wire traffic of real agents through the whole protocol layer",
    "test_self_contained.py": "no file of the repository reaches outside it",
    "test_status_owner.py": "no Lua file decides a status state; the facts Lua records are the declared ones",
    "test_tests_mirror.py": "this layout",
}


def unit_tests(unit: Path) -> list[Path]:
    return sorted(path for path in unit.rglob("test_*.py") if "__pycache__" not in path.parts)


def misplaced(unit: Path, package: Path) -> list[str]:
    """Each test file out of the mirror, with what is wrong."""
    found = []
    for path in unit_tests(unit):
        relative = path.relative_to(unit)
        source = package.joinpath(*relative.parts[:-1])
        modules = {module.stem for module in source.glob("*.py") if module.stem != "__init__"}
        tested = relative.stem.removeprefix("test_")
        names_a_module = any(tested == module or tested.startswith(f"{module}_") for module in modules)
        if len(relative.parts) == 1:
            # The package's own top-level modules (`probe.py`) have theirs at the top too.
            if relative.name not in CROSS_CUTTING and not names_a_module:
                found.append(
                    f"{relative}: at the top but not cross-cutting; move it beside its module's path"
                )
            continue
        if not names_a_module:
            found.append(f"{relative}: names no module of acp_nvim/{relative.parent}/")
    return found


def test_every_unit_test_names_the_module_at_its_mirrored_path() -> None:
    assert misplaced(UNIT, PACKAGE) == []


def test_every_listed_cross_cutting_test_exists() -> None:
    assert sorted(name for name in CROSS_CUTTING if not (UNIT / name).exists()) == []


def test_every_folder_of_unit_tests_is_a_package() -> None:
    # Without its `__init__.py` a folder's tests are imported by their bare names, and two `test_session.py`
    # in two folders would collide.
    folders = {path.parent for path in unit_tests(UNIT)}
    assert (
        sorted(str(folder.relative_to(UNIT)) for folder in folders if not (folder / "__init__.py").exists())
        == []
    )
