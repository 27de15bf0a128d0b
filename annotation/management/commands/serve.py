import subprocess

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.core.management.base import BaseCommand

from annotation.models import Campaign
from evalsite.celery import worker_command


class Command(BaseCommand):
    help = (
        "Run the whole platform on one machine: migrate, build the demo campaign, start a "
        "Celery worker process (both queues), and serve the site."
    )

    def add_arguments(self, parser):
        parser.add_argument("addrport", nargs="?", default="127.0.0.1:8000")
        parser.add_argument("--no-demo", action="store_true")
        parser.add_argument(
            "--no-worker", action="store_true", help="when workers run elsewhere (production)"
        )

    def handle(self, addrport, no_demo, no_worker, **options):
        call_command("migrate", verbosity=0)
        if not no_demo and not Campaign.objects.filter(slug="demo").exists():
            call_command("demo")
        self.ensure_organiser()
        worker = None if no_worker else self.start_worker()
        self.stdout.write(
            self.style.SUCCESS(
                f"Annotators: http://{addrport}/annotate/demo/quality/?PROLIFIC_PID=try-me\n"
                f"Organisers: http://{addrport}/admin/ (admin / admin on a fresh database)\n"
                "The demo's hosted system e2e-template gets its outputs from the admin "
                "(Hosted systems, 'Generate outputs') or `manage.py generate demo e2e-template`."
            )
        )
        try:
            call_command("runserver", addrport, use_reloader=False)
        finally:
            if worker:
                worker.terminate()
                worker.wait(timeout=30)

    def ensure_organiser(self) -> None:
        users = get_user_model().objects
        if settings.DEBUG and not users.filter(is_superuser=True).exists():
            users.create_superuser("admin", "admin@example.org", "admin")
            self.stdout.write("Created the organiser account admin / admin (DEBUG only).")

    def start_worker(self) -> subprocess.Popen:
        command = worker_command("--concurrency=2")
        self.stdout.write(f"Starting a Celery worker: {' '.join(command[1:])}")
        return subprocess.Popen(command, cwd=settings.BASE_DIR)
