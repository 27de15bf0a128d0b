from django.apps import AppConfig


class AgreementConfig(AppConfig):
    name = "ranking.agreement"
    # The models' tables keep their names from when they were ranking's (Meta.db_table).
    label = "agreement"
    verbose_name = "Annotator agreement"
