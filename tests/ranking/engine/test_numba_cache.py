from ranking.engine import numba_cache


def test_drop_stale_cache_clears_kernels_built_from_other_sources(tmp_path):
    (tmp_path / "protocols._e2e_runs-1.py311.nbi").write_bytes(b"index")
    (tmp_path / "protocols._e2e_runs-1.py311.1.nbc").write_bytes(b"code")
    (tmp_path / "engine-sources.sha256").write_text("digest of older sources")
    assert numba_cache.drop_stale_cache(tmp_path)
    assert not list(tmp_path.glob("*.nb?"))
    assert (tmp_path / "engine-sources.sha256").read_text() == numba_cache.sources_digest()


def test_drop_stale_cache_keeps_kernels_of_the_same_sources(tmp_path):
    (tmp_path / "engine-sources.sha256").write_text(numba_cache.sources_digest())
    kernel = tmp_path / "protocols._e2e_runs-1.py311.nbi"
    kernel.write_bytes(b"index")
    assert not numba_cache.drop_stale_cache(tmp_path)
    assert kernel.exists()
