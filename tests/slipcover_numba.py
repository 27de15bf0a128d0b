"""Loaded by `bin/test --coverage` (`-p tests.slipcover_numba`) before slipcover's own pytest
plugin. slipcover measures lines by inserting a call into each function's bytecode; numba
compiles a kernel from that bytecode, and keys its disk cache on it, so an instrumented
kernel fails to compile ("Cannot determine Numba type"). The functions under a numba
decorator are left as they are: numba runs them compiled, so no Python line of theirs runs
in any case, and their tests compare them with reference code. slipcover is pinned in
pyproject.toml: these wrap two of its methods."""

import linecache
import re
import types

import slipcover

NUMBA_DECORATOR = re.compile(r"@[\w.]*\b(njit|jit|vectorize|guvectorize)\b")

_instrument = slipcover.Slipcover.instrument
_deinstrument = slipcover.Slipcover.deinstrument


def decorators(code: types.CodeType) -> list[str]:
    """The decorator lines above a function (a decorated function's code starts at its
    first decorator)."""
    lines = []
    number = code.co_firstlineno
    while (line := linecache.getline(code.co_filename, number).strip()).startswith("@"):
        lines.append(line)
        number += 1
    return lines


def is_kernel(code: types.CodeType) -> bool:
    return any(NUMBA_DECORATOR.match(line) for line in decorators(code))


def instrument(self, code, parent=None):
    if isinstance(code, types.CodeType) and is_kernel(code):
        return code
    return _instrument(self, code, parent)


def deinstrument(self, code, lines):
    if isinstance(code, types.CodeType) and code not in self.code2index:
        return code  # a kernel, left as it was
    return _deinstrument(self, code, lines)


slipcover.Slipcover.instrument = instrument
slipcover.Slipcover.deinstrument = deinstrument
