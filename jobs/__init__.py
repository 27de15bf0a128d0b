"""Background jobs (ranking runs, metric runs, generation jobs): the claim, the heartbeat and
what their admins show alike. A plain package beneath the apps, not an app: its one model,
`claims.BackgroundJob`, is abstract, and each app's concrete jobs live in that app. It
imports Django and Celery, none of our apps, nor the project (evalsite)."""
