from django.apps import AppConfig


class RankingConfig(AppConfig):
    name = "ranking"

    def ready(self) -> None:
        from annotation.signals import hit_submitted

        from .service import schedule_recompute

        def on_hit_submitted(sender, campaign_id: int, criterion: str, **kwargs) -> None:
            schedule_recompute(campaign_id, criterion)

        hit_submitted.connect(on_hit_submitted, dispatch_uid="ranking.schedule_recompute")
