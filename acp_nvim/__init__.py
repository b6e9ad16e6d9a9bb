"""acp.nvim: an Agent Client Protocol client for Neovim."""

from __future__ import annotations

# The one place the version lives: pyproject reads it, and the plugin runs from its checkout (the private
# environment holds only the dependencies), where no installed metadata exists.
__version__ = "0.1.0"
