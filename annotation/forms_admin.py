from typing import cast

from django import forms
from django.conf import settings

from .exporters import FORMATS
from .models import CampaignCriterion, Criterion, DataFile, System


class DataFileUploadForm(forms.Form):
    kind = forms.ChoiceField(choices=DataFile.Kind.choices)
    file = forms.FileField(help_text="CSV, TSV or JSON Lines, UTF-8.")
    system = forms.ModelChoiceField(
        queryset=System.objects.none(), required=False, help_text="For system outputs."
    )
    new_system = forms.SlugField(
        required=False, help_text="Or the name of a new system for these outputs."
    )
    criterion = forms.ChoiceField(
        choices=[("", "from the columns")] + Criterion.choices,
        required=False,
        help_text="For ratings files with both quality and naturalness columns.",
    )

    def __init__(self, *args, campaign, **kwargs):
        super().__init__(*args, **kwargs)
        self.campaign = campaign
        system = cast(forms.ModelChoiceField, self.fields["system"])
        system.queryset = campaign.systems.all()

    def clean_file(self):
        upload = self.cleaned_data["file"]
        if upload.size > settings.IMPORT_MAX_BYTES:
            raise forms.ValidationError(f"The limit is {settings.IMPORT_MAX_BYTES:,} bytes.")
        return upload

    def clean_new_system(self):
        name = self.cleaned_data["new_system"]
        if name and self.campaign.systems.filter(name=name).exists():
            raise forms.ValidationError(f"The campaign already has a system '{name}'.")
        return name

    def clean(self):
        super().clean()
        cleaned = self.cleaned_data
        is_outputs = cleaned.get("kind") == DataFile.Kind.OUTPUTS
        has_system = cleaned.get("system") or cleaned.get("new_system")
        if is_outputs and not has_system:
            raise forms.ValidationError("Outputs need a system: pick one or name a new one.")
        return cleaned


class JudgmentExportForm(forms.Form):
    file_format = forms.ChoiceField(label="Format", choices=list(FORMATS.items()))
    criterion = forms.ChoiceField(required=False, help_text="The E2E format holds one criterion.")

    def __init__(self, *args, campaign, **kwargs):
        super().__init__(*args, **kwargs)
        self.campaign = campaign
        criterion = cast(forms.ChoiceField, self.fields["criterion"])
        criterion.choices = [("", "all criteria")] + [
            (each.criterion, each.get_criterion_display())
            for each in campaign.criteria.order_by("criterion")
        ]

    def clean_criterion(self) -> CampaignCriterion | None:
        name = self.cleaned_data["criterion"]
        return self.campaign.criteria.get(criterion=name) if name else None

    def clean(self):
        super().clean()
        cleaned = self.cleaned_data
        if cleaned.get("file_format") == "e2e" and not cleaned.get("criterion"):
            raise forms.ValidationError("The E2E format holds one criterion: choose it.")
        return cleaned


# Enough for an in-house pool; a crowd comes through the study URL instead.
MAX_INVITATIONS = 200


class InvitationForm(forms.Form):
    names = forms.CharField(
        widget=forms.Textarea(attrs={"rows": 8, "cols": 40}),
        help_text=f"One annotator per line (at most {MAX_INVITATIONS}); a name invited before"
        " keeps its link.",
    )

    def clean_names(self) -> list[str]:
        names = list(dict.fromkeys(n.strip() for n in self.cleaned_data["names"].splitlines()))
        names = [n for n in names if n]
        if not names:
            raise forms.ValidationError("Give at least one name.")
        if len(names) > MAX_INVITATIONS:
            raise forms.ValidationError(f"At most {MAX_INVITATIONS} names at once.")
        too_long = [n for n in names if len(n) > 200]
        if too_long:
            raise forms.ValidationError(f"Names of at most 200 characters: {too_long[0][:40]}...")
        return names
