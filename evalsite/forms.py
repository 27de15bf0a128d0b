from django import forms


class DatasheetForm(forms.Form):
    FORMATS = [
        ("markdown", "Markdown, to read and complete"),
        ("zip", "Zip of the JSON and the Markdown"),
    ]
    format = forms.ChoiceField(choices=FORMATS, initial="markdown", widget=forms.RadioSelect)


class LoginAttemptForm(forms.Form):
    """The account a login attempt names, for its rate limit: as typed, whatever Django's
    own login form then makes of it."""

    username = forms.CharField(required=False, max_length=150, strip=True)

    def account(self) -> str:
        # Case folded: one account's limit is not to be dodged by writing its name otherwise.
        return self.cleaned_data["username"].casefold() if self.is_valid() else ""
