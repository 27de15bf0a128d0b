"""A campaign's bundle: writing it (writer.py) and ranking again from it alone (rerank.py).
No models: a sub-package of the ranking app."""
