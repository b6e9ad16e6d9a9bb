"""How each real agent is started offline against the fake model server: its command, its environment and
the config files in a temporary HOME that point every base URL at the server and turn off what would phone
home (telemetry, update checks, model lists, plugin installs)."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from tests.conftest import NODE, PEERS

JAIL = Path(__file__).resolve().parent / "jail.py"
BIN = PEERS / ".bin"
# A model codex's catalogue knows: for any other name codex 0.166 falls back to metadata without `apply_patch`
# (and says so in a warning), and the edits of the tests could not be made.
MODEL = "gpt-5.5"


def _base_env(home: Path) -> dict[str, str]:
    return {
        "HOME": str(home),
        "XDG_CONFIG_HOME": str(home / ".config"),
        "XDG_DATA_HOME": str(home / ".local" / "share"),
        "XDG_CACHE_HOME": str(home / ".cache"),
        "XDG_STATE_HOME": str(home / ".local" / "state"),
        "NO_COLOR": "1",
        "CI": "1",
    }


def codex(home: Path) -> tuple[list[str], dict[str, str], dict[str, str]]:
    codex_home = home / ".codex"
    config = f"""
model = "{MODEL}"
model_provider = "fake"
check_for_update_on_startup = false

[model_providers.fake]
name = "fake"
base_url = "http://127.0.0.1:{{port}}/v1"
wire_api = "responses"
env_key = "FAKE_MODEL_API_KEY"
request_max_retries = 0
stream_max_retries = 0

[analytics]
enabled = false

[feedback]
enabled = false

# codex 0.166 reaches github.com and chatgpt.com at start for its plugins, apps and updates.
[features]
plugins = false
remote_plugin = false
plugin_discovery_prefetch = false
apps = false
in_app_updates = false
"""
    # codex refuses to put its sandbox helpers under the temporary folder, and pytest's folders are there:
    # its own TMPDIR inside the test's HOME keeps CODEX_HOME outside it.
    (home / "tmp").mkdir(exist_ok=True)
    env = {
        **_base_env(home),
        "CODEX_HOME": str(codex_home),
        "FAKE_MODEL_API_KEY": "fake-key",
        "TMPDIR": str(home / "tmp"),
    }
    return [str(BIN / "codex-acp")], env, {str(codex_home / "config.toml"): config}


def gemini(home: Path) -> tuple[list[str], dict[str, str], dict[str, str]]:
    settings = {
        "security": {"auth": {"selectedType": "gemini-api-key"}, "folderTrust": {"enabled": False}},
        # A named model: "auto" would first ask a classifier model which one to use.
        "model": {"name": "gemini-2.5-flash"},
        "privacy": {"usageStatisticsEnabled": False},
        "telemetry": {"enabled": False},
        "general": {"disableAutoUpdate": True, "disableUpdateNag": True, "enableAutoUpdate": False},
        "ide": {"enabled": False},
    }
    env = {
        **_base_env(home),
        "GEMINI_API_KEY": "fake-key",
        "GOOGLE_GEMINI_BASE_URL": "http://127.0.0.1:{port}",
        "GEMINI_CLI_NO_RELAUNCH": "true",
    }
    files = {str(home / ".gemini" / "settings.json"): json.dumps(settings)}
    return [NODE, str(PEERS / "@google" / "gemini-cli" / "bundle" / "gemini.js"), "--acp"], env, files


def opencode(home: Path) -> tuple[list[str], dict[str, str], dict[str, str]]:
    config = {
        "$schema": "https://opencode.ai/config.json",
        "autoupdate": False,
        "share": "disabled",
        "model": "fake/fake-model",
        "small_model": "fake/fake-model",
        "provider": {
            "fake": {
                "npm": "@ai-sdk/openai-compatible",
                "name": "Fake",
                "options": {"baseURL": "http://127.0.0.1:{port}/v1", "apiKey": "fake-key"},
                "models": {"fake-model": {"name": "Fake model", "tool_call": True}},
            }
        },
        # Asked, as a user who wants to approve edits sets it (opencode's default allows them).
        "permission": {"edit": "ask", "bash": "ask"},
        "lsp": False,
        "formatter": False,
    }
    env = {
        **_base_env(home),
        "OPENCODE_DISABLE_AUTOUPDATE": "true",
        "OPENCODE_DISABLE_DEFAULT_PLUGINS": "true",
        "OPENCODE_DISABLE_LSP_DOWNLOAD": "true",
        "OPENCODE_DISABLE_MODELS_FETCH": "true",
        "OPENCODE_DISABLE_SHARE": "true",
        "OPENCODE_PURE": "1",
        # It installs @opencode-ai/plugin into its config folder in the background: from the fake server,
        # which has none (the install fails quietly; opencode goes on without it).
        "NPM_CONFIG_REGISTRY": "http://127.0.0.1:{port}/npm/",
    }
    files = {str(home / ".config" / "opencode" / "opencode.json"): json.dumps(config)}
    return [str(BIN / "opencode"), "acp"], env, files


AGENTS = {"codex": codex, "gemini": gemini, "opencode": opencode}


def jail_config(agent: str, tmp: Path) -> tuple[list[str], Path, Path]:
    """The command that runs `agent` in its jail (args for `opts.agents`), the script it serves and the log
    of the requests the server got."""
    home = tmp / f"{agent}-home"
    home.mkdir(parents=True, exist_ok=True)
    argv, env, files = AGENTS[agent](home)
    script, log = tmp / f"{agent}-script.json", tmp / f"{agent}-requests.jsonl"
    script.write_text(json.dumps({"steps": {}}))
    config: dict[str, Any] = {
        "argv": argv,
        "env": env,
        "files": files,
        "script": str(script),
        "log": str(log),
    }
    path = tmp / f"{agent}-jail.json"
    path.write_text(json.dumps(config))
    return [sys.executable, str(JAIL), str(path)], script, log
