from typing import cast

from django import forms

from .models import RankingRun
from .protocols import CHOICES, DEFAULT


class ProtocolForm(forms.Form):
    protocol = forms.ChoiceField(choices=CHOICES, required=False)

    def chosen(self) -> str:
        if self.is_valid() and self.cleaned_data["protocol"]:
            return self.cleaned_data["protocol"]
        return DEFAULT


class RecomputeForm(forms.ModelForm):
    """What a ranking run is asked for; the limits on repetitions are the model field's."""

    protocol = forms.ChoiceField(choices=CHOICES, initial=DEFAULT)
    seed = forms.IntegerField(min_value=0, max_value=2**63 - 1, initial=0)

    class Meta:
        model = RankingRun
        fields = ["protocol", "repetitions", "seed"]

    def __init__(self, *args, protocols: list[str] | None = None, **kwargs):
        """`protocols`: the names offered (those that fit the criterion's judgment form);
        all registered ones if not given."""
        super().__init__(*args, **kwargs)
        if protocols is not None:
            offered = [(name, label) for name, label in CHOICES if name in protocols]
            cast(forms.ChoiceField, self.fields["protocol"]).choices = offered
