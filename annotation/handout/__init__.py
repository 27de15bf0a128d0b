"""The hand-out: who gets which HIT, the loads balance rests on, the answers' saving, and
the annotator pages' steps that hold the criterion's lock (flow.py)."""
