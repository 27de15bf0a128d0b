"""Loaded by `bin/test --coverage` (`-p tests.slipcover_numba`) before slipcover's own pytest
plugin. slipcover measures lines by inserting a call into each function's bytecode; numba
compiles a kernel from that bytecode, and keys its disk cache on it, so an instrumented
kernel fails to compile ("Cannot determine Numba type"). The functions under a numba
decorator are left as they are: numba runs them compiled, so no Python line of theirs runs
in any case, and their tests compare them with reference code."""

import linecache
import re
import types

import slipcover

NUMBA_DECORATOR = re.compile(r"\s*@[\w.]*\b(njit|jit|vectorize|guvectorize)\b")

_instrument = slipcover.Slipcover.instrument
_deinstrument = slipcover.Slipcover.deinstrument


def instrument(self, code, parent=None):
    if isinstance(code, types.CodeType) and NUMBA_DECORATOR.match(
        linecache.getline(code.co_filename, code.co_firstlineno)
    ):
        return code
    return _instrument(self, code, parent)


def deinstrument(self, code, lines):
    if isinstance(code, types.CodeType) and code not in self.code2index:
        return code  # a kernel left as it was
    return _deinstrument(self, code, lines)


slipcover.Slipcover.instrument = instrument
slipcover.Slipcover.deinstrument = deinstrument
