"""The only package that imports pynvim (through the rplugin entry): host, thread bridge, Neovim `Editor`."""
