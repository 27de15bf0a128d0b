from django.apps import AppConfig


class AutomaticMetricsConfig(AppConfig):
    name = "ranking.automatic_metrics"
    # The models' tables keep their names from when they were ranking's (Meta.db_table).
    label = "automatic_metrics"
    verbose_name = "Automatic metrics"
