"""Filling in an admin change form as a person who changes a few fields would: every field
the page shows, with the value it shows (tests/client.py sends hidden fields only)."""

from django import forms
from django.http import HttpResponse


def change_form_data(page: HttpResponse) -> dict:
    """The POST data of the change form on `page` as shown: its fields, and its inlines'
    management forms and rows. A checkbox left unticked is left out, as a browser does."""
    assert page.status_code == 200, page.status_code
    shown = [page.context["adminform"].form]
    data: dict = {}
    for inline in page.context["inline_admin_formsets"]:
        formset = inline.formset
        shown += [formset.management_form, *formset.forms]
    for form in shown:
        for name, field in form.fields.items():
            value = form[name].value()
            if field.disabled or value is None:
                continue
            if isinstance(field.widget, forms.CheckboxInput):
                if value:
                    data[form.add_prefix(name)] = "on"
                continue
            if isinstance(field.widget, forms.MultiWidget):  # a date and a time
                parts = field.widget.decompress(value)
                for suffix, part in zip(field.widget.widgets_names, parts, strict=True):
                    data[form.add_prefix(name) + suffix] = "" if part is None else str(part)
                continue
            data[form.add_prefix(name)] = value
    return data
