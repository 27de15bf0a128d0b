"""Agreement between the annotators of each ranking run (Django app `agreement`): measured
by the worker that computes the run and stored with it. Depends on ranking's RankingRun;
ranking.service writes it, ranking's results page and admin show it. The measures
themselves are Django-free, in ranking/engine/agreement.py."""
