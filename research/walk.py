"""The walk of one piece of work through the project's modules, traced as it runs.

docs/architecture.md reports two walks (a ranking run as the worker runs it, a judgment's
submission); tests/evalsite/test_walk.py runs them on the test database, holds the
ranking run's bound and prints them (`pytest -n 0 -s tests/evalsite/test_walk.py`).

A step is a call from one project module into another (a call inside a module is none; a
call from a library, Django's ORM say, counts as one from the project frame beneath it).
Each step is listed once, the first time one module calls the other (named by the function
called then): a loop's calls, a progress callback called every repetition, or a second
helper of the same module, are the same step again. `Walk(by_module=False)` lists each
calling function's first call of each function instead, a finer and longer walk.

A step *returns* when it enters a module the walk has already left, which a reader of the
code must then find again: a leaf calling back up into its caller's module (a callback), or
one module entered from two places. A walk whose steps go down from one orchestrating
function into leaves returns seldom.

Pure Python: sys.setprofile on the calling thread only, so the heartbeat's thread is not
traced.
"""

import sys
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from types import FrameType

# The project's packages; a module outside them (Django, numpy, the standard library) is
# not a step of the walk.
PROJECT = ("annotation", "api", "evalsite", "generation", "jobs", "judges", "nlgdata", "ranking")


@dataclass(frozen=True)
class Step:
    caller: str  # module
    module: str
    function: str  # its qualified name in `module`


@dataclass
class Walk:
    """Steps in the order first taken."""

    packages: tuple[str, ...] = PROJECT
    by_module: bool = True
    steps: list[Step] = field(default_factory=list)
    _seen: set[tuple[str, ...]] = field(default_factory=set)

    def trace(self, work: Callable[[], object]) -> object:
        previous = sys.getprofile()
        sys.setprofile(self._profile)
        try:
            return work()
        finally:
            sys.setprofile(previous)

    def _profile(self, frame: FrameType, event: str, arg: object) -> None:
        if event != "call":
            return
        module = self.project_module(frame)
        if module is None:
            return
        caller = self.project_caller(frame.f_back)
        if caller is None or caller[0] == module:
            return
        function = frame.f_code.co_qualname
        edge = (caller[0], module) if self.by_module else (*caller, module, function)
        if edge not in self._seen:
            self._seen.add(edge)
            self.steps.append(Step(caller[0], module, function))

    def project_module(self, frame: FrameType) -> str | None:
        name = frame.f_globals.get("__name__", "")
        if name.split(".")[0] in self.packages and ".migrations." not in name:
            return name
        return None

    def project_caller(self, frame: FrameType | None) -> tuple[str, str] | None:
        """The nearest project frame beneath a call: (module, function)."""
        while frame is not None:
            module = self.project_module(frame)
            if module is not None:
                return module, frame.f_code.co_qualname
            frame = frame.f_back
        return None


@dataclass(frozen=True)
class Counted:
    steps: int
    modules: int
    returns: int


def count(steps: Iterable[Step]) -> Counted:
    """Steps, the modules they touch (the first caller's included), and the returns: steps
    into a module entered before (the one the walk starts in included)."""
    steps = list(steps)
    if not steps:
        return Counted(0, 0, 0)
    entered = {steps[0].caller}
    returns = 0
    for step in steps:
        if step.module in entered:
            returns += 1
        entered.add(step.module)
    return Counted(len(steps), len(entered), returns)


def report(steps: Iterable[Step]) -> str:
    """One line per step, the returns marked, and the counts."""
    steps = list(steps)
    lines, entered = [], {steps[0].caller} if steps else set()
    for number, step in enumerate(steps, start=1):
        mark = "back" if step.module in entered else ""
        entered.add(step.module)
        lines.append(f"{number:3} {mark:4} {step.caller} -> {step.module}.{step.function}")
    counted = count(steps)
    lines.append(
        f"{counted.steps} steps over {counted.modules} modules, {counted.returns} of them back"
        " into a module already left"
    )
    return "\n".join(lines)
