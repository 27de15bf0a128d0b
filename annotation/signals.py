"""Signals that let other apps react to annotation without annotation importing them."""

from django.dispatch import Signal

# Sent after the transaction that saved a submitted HIT commits.
# Arguments: campaign_id (int), criterion (str).
hit_submitted = Signal()

# Sent by `manage.py demo` inside its transaction, after the demo campaign is built, so other
# apps can add their part (the generation app adds its hosted template system).
# Arguments: campaign (Campaign).
demo_campaign_built = Signal()
