"""The platform's shared vocabulary, with no Django: input kinds and their checks, the E2E
MR syntax, text helpers, what a RankME judgment may hold, and the readers of data files.

annotation, ranking and the generation backends import it; it imports none of them.
"""
