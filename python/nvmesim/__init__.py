"""nvmesim from Python: runs, parameters, presets and sweeps.

A thin layer over the nvmesim command. SystemC elaborates a design once per
process, so every run is its own nvmesim process (as the command's sweep
runs its points): repeated run() calls in one interpreter work, and parallel
sweeps use processes. The documents returned are the command's own
--output-format=json documents, parsed, so they equal the CLI's for the same
configuration and seed.

The command is found, in order: the NVMESIM_BINARY environment variable,
`nvmesim` on PATH, the build tree beside this package (build/nvmesim).
"""

from ._command import (Error, Interrupted, binary, params, presets, run,
                       sweep)

__all__ = ["Error", "Interrupted", "binary", "params", "presets", "run", "sweep"]
