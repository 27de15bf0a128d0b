"""Published and reference figures for E2E quality (DESIGN.md, 'From rankings to clusters')."""

# Mean mu per system from the wmt-trueskill code, 200 runs of the E2E protocol on the released
# quality ratings (standard deviation over runs at most 0.02 per system).
REFERENCE_MEAN_MU = {
    "tuda": 0.307,
    "slug": 0.264,
    "gong": 0.198,
    "dangnt": 0.186,
    "tgen": 0.180,
    "slug-alt": 0.135,
    "zhaw2": 0.114,
    "tnt1": 0.077,
    "tnt2": 0.060,
    "nle": 0.045,
    "zhaw1": 0.015,
    "forge1": 0.011,
    "harv": -0.013,
    "sheff1": -0.023,
    "tr2": -0.066,
    "forge3": -0.110,
    "adapt": -0.143,
    "zhang": -0.173,
    "tr1": -0.176,
    "chen": -0.431,
    "sheff2": -0.459,
}

# E2E Table 11, quality: system -> (cluster, mu, best rank, worst rank).
TABLE_11 = {
    "slug": (1, 0.300, 1, 1),
    "tuda": (2, 0.228, 2, 4),
    "gong": (2, 0.213, 2, 5),
    "dangnt": (2, 0.184, 3, 5),
    "tgen": (2, 0.184, 3, 6),
    "slug-alt": (2, 0.136, 5, 7),
    "zhaw2": (2, 0.117, 6, 8),
    "tnt1": (2, 0.084, 7, 10),
    "tnt2": (2, 0.065, 8, 10),
    "nle": (2, 0.048, 8, 12),
    "zhaw1": (2, 0.018, 10, 13),
    "forge1": (2, 0.014, 10, 14),
    "sheff1": (2, 0.012, 11, 14),
    "harv": (2, 0.012, 11, 14),
    "tr2": (3, -0.078, 15, 16),
    "forge3": (3, -0.083, 15, 16),
    "adapt": (4, -0.152, 17, 19),
    "tr1": (4, -0.185, 17, 19),
    "zhang": (4, -0.186, 17, 19),
    "chen": (5, -0.426, 20, 21),
    "sheff2": (5, -0.457, 20, 21),
}
