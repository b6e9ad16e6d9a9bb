"""ACP agents shipped with the plugin (runtime dependencies only). `python -m acp_nvim.agents.demo`."""

from __future__ import annotations
