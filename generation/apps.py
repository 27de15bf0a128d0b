from django.apps import AppConfig


class GenerationConfig(AppConfig):
    name = "generation"

    def ready(self) -> None:
        from annotation.signals import demo_campaign_built

        from .demo import add_hosted_template_system

        demo_campaign_built.connect(add_hosted_template_system, dispatch_uid="generation.demo")
