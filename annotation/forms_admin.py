import json
from typing import cast

from django import forms
from django.core.exceptions import ValidationError

from nlgdata.inputs import InputError, check_input, format_mr, parse_mr

from . import judging
from .datafiles.exporters import FORMATS
from .models import Campaign, CampaignCriterion


class JudgmentExportForm(forms.Form):
    file_format = forms.ChoiceField(label="Format", choices=list(FORMATS.items()))
    criterion = forms.ChoiceField(required=False, help_text="The E2E format holds one criterion.")

    def __init__(self, *args, campaign, **kwargs):
        super().__init__(*args, **kwargs)
        self.campaign = campaign
        criterion = cast(forms.ChoiceField, self.fields["criterion"])
        criterion.choices = [("", "all criteria")] + [
            (each.name, each.label) for each in campaign.criteria.order_by("name")
        ]

    def clean_criterion(self) -> CampaignCriterion | None:
        name = self.cleaned_data["criterion"]
        return self.campaign.criteria.get(name=name) if name else None

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


STANDARD_INPUT_HELP = (
    "The standard's own input, entered as items are: for an MR, its E2E text "
    '(name[The Vaults], eatType[pub]) or the item JSON ({"attributes": [["name", '
    '"The Vaults"]]}); for other kinds, the item JSON. Empty: the standard is shown without '
    "an input."
)


class CampaignAdminForm(forms.ModelForm):
    """The campaign's admin form: the standard's input is typed as text and checked against
    its kind, so that what is saved is what the HIT pages show."""

    standard_input = forms.CharField(
        required=False, widget=forms.Textarea(attrs={"rows": 3}), help_text=STANDARD_INPUT_HELP
    )

    class Meta:
        model = Campaign
        # The admin's fieldsets name the rest; these are the fields this form checks.
        fields = ["standard_text", "standard_input_kind", "standard_input"]

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        data = self.instance.standard_input if self.instance.pk else None
        # An empty input is shown empty, as typed, not as the "{}" stored for it.
        self.initial["standard_input"] = shown_input(self.instance.standard_input_kind, data)

    def clean(self):
        super().clean()
        cleaned = self.cleaned_data
        text = (cleaned.get("standard_input") or "").strip()
        kind = cleaned.get("standard_input_kind")
        # "{}" is how an empty input read back from the database used to be shown.
        if text in ("", "{}"):
            cleaned["standard_input"] = {}
            return cleaned
        try:
            data = read_input(kind, text)
            check_input(kind, data)
        except InputError as error:
            self.add_error("standard_input", f"{error}. {STANDARD_INPUT_HELP}")
        else:
            cleaned["standard_input"] = data
        return cleaned


class CriterionAdminForm(forms.ModelForm):
    """A criterion of the campaign page. Which criterion a row is, and its judgment form,
    stay as they were made: its HITs and judgments are of that criterion, judged so (a new
    row chooses both). The form is chosen among the registry's (annotation/judging/)."""

    form = forms.ChoiceField(
        label="Judgment form", choices=judging.CHOICES, initial=judging.DEFAULT
    )

    class Meta:
        model = CampaignCriterion
        # The inline names the rest; these are the fields this form fixes.
        fields = ["name", "form"]
        widgets = {"question": forms.Textarea(attrs={"rows": 2})}

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["form"].help_text = CampaignCriterion._meta.get_field("form").help_text
        if self.instance.pk:
            self.fields["name"].disabled = True
            self.fields["form"].disabled = True

    def _post_clean(self) -> None:
        # After the model's own checks, the settings as the criterion's form reads them,
        # checked and completed (as judging.clean_criterion does for the API and imports).
        # _post_clean is where a ModelForm checks its instance (Django's UserCreationForm
        # extends it too); the stubs leave it out.
        super()._post_clean()  # type: ignore[misc]
        if not any(self.has_error(field) for field in ("form", "question", "settings")):
            try:
                judging.complete_settings(self.instance)
            except ValidationError as error:
                self.add_error(None, error)


def shown_input(kind: str, data: dict | None) -> str:
    """A stored input as an organiser types it: an MR as E2E text, others as JSON."""
    if not data:
        return ""
    return format_mr(data["attributes"]) if kind == "mr" else json.dumps(data)


def read_input(kind: str | None, text: str) -> dict:
    """An input typed as an item's: JSON, or for an MR its E2E text."""
    if text.startswith("{"):
        try:
            return json.loads(text)
        except ValueError as error:
            raise InputError(f"{kind}: not valid JSON ({error})") from None
    if kind == "mr":
        return {"attributes": parse_mr(text)}
    raise InputError(f"{kind}: give the item JSON")
