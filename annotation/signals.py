"""Signals that let other apps react to annotation without annotation importing them."""

from django.dispatch import Signal

# Sent after the transaction that saved a submitted HIT commits.
# Arguments: campaign_id (int), criterion (str).
hit_submitted = Signal()
