from django import forms


class DatasheetForm(forms.Form):
    FORMATS = [
        ("markdown", "Markdown, to read and complete"),
        ("zip", "Zip of the JSON and the Markdown"),
    ]
    format = forms.ChoiceField(choices=FORMATS, initial="markdown", widget=forms.RadioSelect)
