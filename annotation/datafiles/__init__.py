"""The data files: items, outputs and ratings read in, judgments written out."""
