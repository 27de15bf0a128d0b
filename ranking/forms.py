from django import forms

from .models import Protocol


class ProtocolForm(forms.Form):
    protocol = forms.ChoiceField(choices=Protocol.choices, required=False)

    def chosen(self) -> str:
        if self.is_valid() and self.cleaned_data["protocol"]:
            return self.cleaned_data["protocol"]
        return Protocol.E2E


class RecomputeForm(forms.Form):
    protocol = forms.ChoiceField(choices=Protocol.choices)
    runs = forms.IntegerField(min_value=10, max_value=10_000, initial=200)
    seed = forms.IntegerField(min_value=0, max_value=2**63 - 1, initial=0)
