"""The build backend of python/: maturin's, with its Rust download turned off.

maturin (1.9 and later) fetches a Rust toolchain (the `puccinialin` package,
then rustup) when no `cargo` is on PATH, unless MATURIN_NO_INSTALL_RUST is
set. This package builds with the machine's own cargo or fails saying that
cargo is missing (issue 24: it must never download a toolchain), so the
variable is set here, before any of maturin's hooks reads it, whatever the
caller's environment. Every PEP 517 hook is maturin's own.
"""

import os

os.environ["MATURIN_NO_INSTALL_RUST"] = "1"

import maturin as _maturin  # noqa: E402  (after the variable, on purpose)

_HOOKS = (
    "build_wheel",
    "build_sdist",
    "build_editable",
    "get_requires_for_build_wheel",
    "get_requires_for_build_sdist",
    "get_requires_for_build_editable",
    "prepare_metadata_for_build_wheel",
    "prepare_metadata_for_build_editable",
)

# Only the hooks this maturin has: a frontend falls back on the defaults for
# an optional one that is missing.
for _name in _HOOKS:
    if hasattr(_maturin, _name):
        globals()[_name] = getattr(_maturin, _name)
