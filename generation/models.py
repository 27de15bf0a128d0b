# Models arrive with the generation issue.
