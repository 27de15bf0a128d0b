"""Keeps numba's disk cache of the engine's kernels in step with the engine's sources.

numba checks only the file that defines each cached function, not the modules it calls, so
an edit to trueskill.py or rng.py alone would leave stale compiled kernels in use. Before the
kernels are imported, this clears the cache whenever any engine source file has changed.
"""

import hashlib
from pathlib import Path

ENGINE_DIR = Path(__file__).resolve().parent


def sources_digest() -> str:
    digest = hashlib.sha256()
    for path in sorted(ENGINE_DIR.glob("*.py")):
        digest.update(path.name.encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()


def drop_stale_cache(cache_dir: Path = ENGINE_DIR / "__pycache__") -> bool:
    """Delete cached kernels built from other sources; True if any were deleted."""
    stamp = cache_dir / "engine-sources.sha256"
    digest = sources_digest()
    try:
        recorded = stamp.read_text()
    except OSError:
        recorded = ""  # no stamp yet: whatever is cached was built from unknown sources
    if recorded == digest:
        return False
    try:
        stale = list(cache_dir.glob("*.nbi")) + list(cache_dir.glob("*.nbc"))
        for path in stale:
            path.unlink(missing_ok=True)
        cache_dir.mkdir(exist_ok=True)
        stamp.write_text(digest)
    except OSError:
        return False  # a read-only install: numba then uses its own user-wide cache
    return bool(stale)
