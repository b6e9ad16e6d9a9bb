"""The ACP Registry: its entries, their cache and downloads, the installs of binary agents, the catalogue
the user picks from and the registry agents it starts. Loaded only when the registry is used (`options.py`
aside: it is what a start reads of `opts.registry`, and imports nothing of the rest)."""
