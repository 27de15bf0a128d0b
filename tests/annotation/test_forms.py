import pytest
from django import forms
from hypothesis import given, settings
from hypothesis import strategies as st

from annotation.forms import (
    COVERAGE_MISSING,
    EntryForm,
    HitForm,
    KeyInput,
    MagnitudeField,
    MarkInput,
    ScoreInput,
)
from annotation.handout.shown import Answer, Shown
from nlgdata.judgments import COVERAGE_MARKS, COVERAGE_RULE


def shown(n=2):
    return [Shown(key=k, label="ABCDE"[k - 1], text=f"Sentence {k}.") for k in range(1, n + 1)]


@pytest.mark.parametrize(
    "typed, expected",
    [("100", 100), ("1", 1), (" 250 ", 250), ("999999", 999999), ("007", 7), ("0000001", 1)],
)
def test_magnitude_field_takes_whole_positive_numbers(typed, expected):
    assert MagnitudeField().clean(typed) == expected


@pytest.mark.parametrize(
    "typed, code",
    [
        ("", "required"),
        ("   ", "required"),
        ("0", "zero"),
        ("000", "zero"),
        ("-5", "negative"),
        ("- 5", "negative"),
        ("2.5", "fraction"),
        ("2,5", "fraction"),
        (".5", "fraction"),
        ("1000000", "too_long"),
        ("0" * 5000 + "5", "too_long"),  # past int()'s 4300-digit limit
        ("9" * 5000, "too_long"),
        ("1" * 21, "too_long"),
        ("-" + "5" * 30, "too_long"),
        ("1e3", "invalid"),
        ("ten", "invalid"),
        ("１００", "invalid"),  # full-width digits are not what the page asked for
        ("<b>1</b>", "invalid"),
    ],
)
def test_magnitude_field_refuses_other_entries_with_a_clear_message(typed, code):
    field = MagnitudeField()
    with pytest.raises(forms.ValidationError) as caught:
        field.clean(typed)
    assert caught.value.messages == [field.error_messages[code]]


def test_hit_form_5000_digit_score_is_a_field_error():
    form = HitForm({"score_1": "0" * 5000 + "5", "score_2": "50"}, shown=shown(), coverage=False)
    assert not form.is_valid()
    assert form.errors == {"score_1": [MagnitudeField.default_error_messages["too_long"]]}


SCORE_TEXT = st.text(alphabet=st.sampled_from("0123456789 -.,e\x00") | st.characters())
# Hypothesis rarely draws long texts: leading zeros past int()'s limit are added by hand.
FORM_VALUES = SCORE_TEXT | st.integers(4000, 6000).map(lambda n: "0" * n + "7")


@settings(max_examples=200, deadline=None)
@given(FORM_VALUES)
def test_magnitude_field_gives_a_score_or_a_validation_error(typed):
    try:
        score = MagnitudeField().clean(typed)
    except forms.ValidationError as error:
        assert error.messages[0] in MagnitudeField.default_error_messages.values()
    else:
        assert 1 <= score <= 999_999


@settings(max_examples=150, deadline=None)
@given(
    st.dictionaries(
        st.sampled_from(
            ["submission_key", "score_1", "score_2", "score_9", *(f"{m}_1" for m in COVERAGE_MARKS)]
        ),
        FORM_VALUES,
    ),
    st.booleans(),
)
def test_hit_form_gives_answers_or_field_errors(data, coverage):
    form = HitForm(data, shown=shown(), coverage=coverage)
    if form.is_valid():
        assert all(1 <= answer.score <= 999_999 for answer in form.answers().values())
    else:
        assert set(form.errors) <= set(form.fields) | {"__all__"}
        assert form.error_list() or "submission_key" in form.errors


def test_hit_form_gives_one_answer_per_sentence():
    form = HitForm(
        {"score_1": "150", "score_2": "50", "adds_2": "on", "misses_2": "on"},
        shown=shown(),
        coverage=True,
    )
    assert form.is_valid(), form.errors
    assert form.answers() == {
        1: Answer(150),
        2: Answer(50, adds_information=True, misses_information=True),
    }


@pytest.mark.parametrize("other", ["adds_1", "misses_1"])
def test_hit_form_perfect_cannot_go_with_added_or_missing(other):
    data = {"score_1": "100", "score_2": "100", "perfect_1": "on", other: "on"}
    form = HitForm(data, shown=shown(), coverage=True)
    assert not form.is_valid()
    assert form.errors == {"perfect_1": [COVERAGE_RULE]}
    assert form.error_list() == [("A", COVERAGE_RULE, "id_perfect_1")]


def test_hit_form_perfect_alone_is_fine():
    data = {"score_1": "100", "score_2": "90", "perfect_1": "on"}
    form = HitForm(data, shown=shown(), coverage=True)
    assert form.is_valid()
    assert form.answers()[1].reflects_perfectly


def test_hit_form_required_coverage_refuses_a_sentence_without_a_box():
    data = {"score_1": "100", "score_2": "90", "score_3": "80", "misses_1": "on", "adds_3": "on"}
    form = HitForm(data, shown=shown(3), coverage=True, coverage_required=True)
    assert not form.is_valid()
    assert form.errors == {"perfect_2": [COVERAGE_MISSING]}
    assert form.error_list() == [("B", COVERAGE_MISSING, "id_perfect_2")]
    assert [bool(row["coverage_errors"]) for row in form.rows()] == [False, True, False]


def test_hit_form_required_coverage_says_the_rule_once_when_it_is_broken():
    data = {"score_1": "100", "score_2": "90", "perfect_1": "on", "adds_1": "on"}
    form = HitForm(data, shown=shown(), coverage=True, coverage_required=True)
    assert form.errors == {"perfect_1": [COVERAGE_RULE], "perfect_2": [COVERAGE_MISSING]}


def test_hit_form_optional_coverage_takes_sentences_without_a_box():
    form = HitForm({"score_1": "100", "score_2": "90"}, shown=shown(), coverage=True)
    assert form.is_valid(), form.errors
    assert form.answers() == {1: Answer(100), 2: Answer(90)}


def test_hit_form_without_coverage_ignores_the_requirement():
    form = HitForm(
        {"score_1": "1", "score_2": "2"}, shown=shown(), coverage=False, coverage_required=True
    )
    assert form.is_valid(), form.errors
    assert not form.coverage_required


def test_hit_form_without_coverage_has_no_boxes():
    data = {"score_1": "1", "score_2": "2", "perfect_1": "on"}
    form = HitForm(data, shown=shown(), coverage=False)
    assert set(form.fields) == {"submission_key", "score_1", "score_2"}
    assert form.is_valid()
    assert form.answers()[1] == Answer(1)


def test_hit_form_lists_errors_in_page_order():
    form = HitForm({"score_2": "x"}, shown=shown(), coverage=True)
    assert not form.is_valid()
    assert [(label, field) for label, _, field in form.error_list()] == [
        ("A", "id_score_1"),
        ("B", "id_score_2"),
    ]


def test_hit_form_new_page_carries_a_fresh_submission_key():
    first, second = HitForm(shown=shown(), coverage=False), HitForm(shown=shown(), coverage=False)
    assert first["submission_key"].value() != second["submission_key"].value()
    assert len(first["submission_key"].value()) >= 16


@pytest.mark.parametrize(
    "query, source, external_id",
    [
        ({"PROLIFIC_PID": "p1", "STUDY_ID": "s", "SESSION_ID": "x"}, "prolific", "p1"),
        ({"workerId": "W1", "assignmentId": "A", "hitId": "H"}, "mturk", "W1"),
        ({"token": "tok-en_1"}, "invited", ""),
        ({"PROLIFIC_PID": "p1", "workerId": "W1"}, "prolific", "p1"),
    ],
)
def test_entry_form_reads_who_the_link_names(query, source, external_id):
    form = EntryForm(query)
    assert form.is_valid()
    link = form.link()
    assert (link.source, link.external_id) == (source, external_id)


def test_entry_form_without_parameters_names_nobody():
    form = EntryForm({})
    assert form.is_valid()
    assert form.link() is None
    assert not form.is_mturk_preview()


@pytest.mark.parametrize("value", ["a b", "x" * 101, "<script>", "p'1"])
def test_entry_form_refuses_odd_identifiers(value):
    assert not EntryForm({"PROLIFIC_PID": value}).is_valid()


@pytest.mark.parametrize(
    ("ours", "djangos", "value", "attrs"),
    [
        (ScoreInput, forms.TextInput, "12\"<>&'", {"aria-invalid": "true", "required": True}),
        (ScoreInput, forms.TextInput, None, {"size": 7, "spellcheck": "false"}),
        (MarkInput, forms.CheckboxInput, True, {}),
        (MarkInput, forms.CheckboxInput, False, {"disabled": False}),
        (KeyInput, forms.HiddenInput, "a<b", {}),
    ],
)
def test_inputs_written_directly_equal_djangos_templates(ours, djangos, value, attrs):
    attrs = {"id": "id_field", **attrs}
    assert ours().render("field", value, attrs) == djangos().render("field", value, attrs)
