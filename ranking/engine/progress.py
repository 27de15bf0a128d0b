"""How long work reports its progress: (done, total), called as it goes."""

from collections.abc import Callable

Progress = Callable[[int, int], None]
