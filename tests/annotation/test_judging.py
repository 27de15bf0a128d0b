"""The registry of judgment forms: every form is complete, a criterion's form is one of
them, and the code outside a form's own module asks the registry and names none."""

import importlib
import re
from pathlib import Path

import pytest
from django.core.exceptions import ValidationError
from django.template.loader import get_template
from django.urls import reverse

from annotation import form_names
from annotation.judging import DEFAULT, NAMES, REGISTERED, form_named, form_of
from annotation.models import CampaignCriterion
from ranking.protocols import NAMES as PROTOCOL_NAMES
from tests.factories import make_campaign

REPO = Path(__file__).resolve().parents[2]
# Code that may name a form: the forms' own modules, their names' module (which the model
# checks a criterion's form against), and the migrations (which record the
# default as it was when they were made).
# The file layouts of the forms' judgments are named as the forms are (import_ratings
# --form da reads the "da" layout), and nlgdata, beneath annotation, cannot import the names.
MAY_NAME_FORMS = (
    "annotation/judging/",
    "annotation/form_names.py",
    "annotation/migrations/",
    "nlgdata/judgment_files.py",
)


@pytest.mark.parametrize("form", REGISTERED, ids=NAMES)
def test_form_is_complete(form):
    assert re.fullmatch(r"[a-z0-9_]{1,20}", form.name)  # fits CampaignCriterion.form
    assert form.label
    for template in (form.page_template, form.instructions_template):
        get_template(template)  # raises if it is missing
    get_template(form.comprehension.template)
    assert form.attention.wording and form.comprehension.wording
    assert form.datasheet.pages and form.datasheet.elicitation and form.datasheet.rating_means
    assert form.protocols and set(form.protocols) <= set(PROTOCOL_NAMES)
    assert form.export_formats


def test_form_named_refuses_an_unknown_one_naming_the_known():
    with pytest.raises(ValueError, match="unknown judgment form 'likert': use one of rankme"):
        form_named("likert")


def test_the_models_names_are_the_registrys():
    """The model checks a criterion's form against annotation/form_names.py, beneath the
    registry: the same names, in the registry's order, and the same default."""
    assert tuple(NAMES) == form_names.NAMES
    assert DEFAULT == form_names.DEFAULT == CampaignCriterion._meta.get_field("form").default()


def source_files():
    for folder in ("annotation", "ranking", "evalsite", "generation", "nlgdata", "jobs"):
        for path in sorted((REPO / folder).rglob("*.py")):
            relative = path.relative_to(REPO).as_posix()
            if not relative.startswith(MAY_NAME_FORMS):
                yield relative


@pytest.mark.parametrize("path", list(source_files()))
def test_module_outside_the_registry_names_no_form(path):
    source = (REPO / path).read_text()
    named = [name for name in NAMES if re.search(rf"""["']{name}["']""", source)]
    assert named == [], f"{path} names judgment forms {named}: ask annotation.judging instead"


@pytest.mark.parametrize("name", form_names.NAMES)
def test_each_form_is_named_as_its_module(name):
    """The model reads the names from the modules' file names (form_names.form_modules),
    the registry from their FORMs: the same, since a form's module is named as the form."""
    assert importlib.import_module(f"annotation.judging.{name}").FORM.name == name


def test_the_form_names_are_the_modules_but_the_helpers_the_first_four_first(tmp_path):
    for stem in ("__init__", "base", "sliders", "zeta", "da", "likert", "rankme"):
        (tmp_path / f"{stem}.py").write_text("")
    assert form_names.form_modules(tmp_path) == ["rankme", "da", "likert", "zeta"]


@pytest.mark.django_db
def test_a_criterion_is_judged_with_the_default_form_and_refuses_an_unknown_one():
    campaign = make_campaign()
    criterion = campaign.criteria.first()
    assert form_of(criterion) is form_named(criterion.form) is REGISTERED[0]
    criterion.form = "likert"
    with pytest.raises(ValidationError, match="unknown judgment form 'likert'"):
        criterion.full_clean()


@pytest.mark.django_db
def test_settings_must_be_an_object():
    criterion: CampaignCriterion = make_campaign().criteria.first()
    criterion.settings = [1, 2]
    with pytest.raises(ValidationError, match="JSON object"):
        criterion.full_clean()


@pytest.mark.django_db
def test_the_admin_offers_the_registrys_forms_by_label(organiser):
    page = organiser.get(reverse("admin:annotation_campaign_add"))
    html = page.content.decode()
    for form in REGISTERED:
        assert f'<option value="{form.name}"' in html and form.label in html
