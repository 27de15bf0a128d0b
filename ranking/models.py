# Models arrive with the ranking issue.
