"""tests/parallel.py: each pytest-xdist worker gets a var/ and a Redis database of its own."""

import os

import pytest

from tests.parallel import broker_of_worker, separate_worker_environment


def test_each_worker_takes_the_redis_database_after_the_suite_s_own():
    assert broker_of_worker("redis://127.0.0.1:6379/0", 0) == "redis://127.0.0.1:6379/1"
    assert broker_of_worker("redis://127.0.0.1:6379/0", 1) == "redis://127.0.0.1:6379/2"
    assert broker_of_worker("redis://:pw@host:6379", 2) == "redis://:pw@host:6379/3"
    assert broker_of_worker("rediss://host/4", 0) == "rediss://host/5"


def test_a_file_broker_is_left_to_the_worker_s_var_dir():
    assert broker_of_worker("filesystem://", 3) == "filesystem://"


def test_a_worker_beyond_redis_s_databases_is_refused_saying_why():
    with pytest.raises(RuntimeError, match="would need Redis database 16"):
        broker_of_worker("redis://127.0.0.1:6379/14", 1)


def test_a_worker_s_environment_is_set_apart_and_none_without_xdist(monkeypatch, tmp_path):
    monkeypatch.delenv("PYTEST_XDIST_WORKER", raising=False)
    monkeypatch.setenv("VAR_DIR", str(tmp_path))
    monkeypatch.setenv("CELERY_BROKER_URL", "redis://127.0.0.1:6379/0")
    separate_worker_environment()
    assert os.environ["VAR_DIR"] == str(tmp_path)
    assert os.environ["CELERY_BROKER_URL"] == "redis://127.0.0.1:6379/0"
    monkeypatch.setenv("PYTEST_XDIST_WORKER", "gw1")
    separate_worker_environment()
    assert os.environ["VAR_DIR"] == str(tmp_path / "gw1")
    assert os.environ["CELERY_BROKER_URL"] == "redis://127.0.0.1:6379/2"
