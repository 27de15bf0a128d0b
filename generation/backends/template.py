"""The "template-*" backends: one class, with a hand-written realiser per input kind.

Each realiser takes an input's data and returns its text; the backend refuses inputs of
other kinds one by one, so a batch of mixed kinds still gets a result per input.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from nlgdata.inputs import InputError

from .base import GenerationResult, TypedInput, generate_each
from .template_e2e import realise_mr
from .template_rotowire import realise_boxscore
from .template_table import realise_table
from .template_triples import realise_triples


@dataclass(frozen=True)
class TemplateBackend:
    name: str
    label: str  # as organisers read it in the admin
    kind: str
    realise: Callable[[dict[str, Any]], str]

    def generate(self, inputs: Sequence[TypedInput]) -> list[GenerationResult]:
        return generate_each(inputs, self._realise)

    def _realise(self, item: TypedInput) -> str:
        if item.kind != self.kind:
            raise InputError(f"{self.name} does not handle input kind '{item.kind}'")
        return self.realise(item.data)


TEMPLATE_BACKENDS = {
    backend.name: backend
    for backend in (
        TemplateBackend("template-e2e", "E2E templates", "mr", realise_mr),
        TemplateBackend(
            "template-rotowire",
            "RotoWire templates (Wiseman et al. 2017)",
            "boxscore",
            realise_boxscore,
        ),
        TemplateBackend("template-table", "Table templates", "table", realise_table),
        TemplateBackend("template-triples", "Triples templates", "triples", realise_triples),
    )
}
