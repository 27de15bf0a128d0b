"""Every admin action that writes or queues work asks for the change permission (Django
offers an action without `permissions` to anyone who may see the list, view-only staff
included); the ones that only read are listed here by name."""

import pytest
from django.contrib import admin

# Actions that only read what the list shows (a download).
READ_ONLY = {"download_agreement"}


def admin_actions():
    for model, model_admin in admin.site._registry.items():
        for name in model_admin.actions or ():
            function = name if callable(name) else getattr(model_admin, name)
            yield f"{model._meta.label}.{function.__name__}", function


@pytest.mark.parametrize(("where", "action"), list(admin_actions()), ids=lambda v: str(v))
def test_an_action_that_writes_asks_for_a_permission(where, action):
    if action.__name__ in READ_ONLY:
        return
    assert getattr(action, "allowed_permissions", ()), f"{where} asks for no permission"


def test_the_walk_finds_the_actions_that_queue_work():
    names = {where for where, _ in admin_actions()}
    assert {
        "judges.Judge.score_outputs",
        "generation.HostedSystem.generate_outputs",
        "ranking.RankingRun.queue_again",
    } <= names, names
