"""Automatic metrics of a campaign's outputs (Django app `automatic_metrics`): metric runs
computed by a worker, their results, the results page's metrics section, its CSVs and the
`metrics` command. The metrics themselves are Django-free, in ranking/metrics/."""
