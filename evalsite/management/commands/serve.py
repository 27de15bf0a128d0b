import signal

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.core.management.base import BaseCommand
from django.urls import reverse

from annotation.demo import DEMO_SLUG
from annotation.models import QUALITY, Campaign
from evalsite.celery import ONE_MACHINE, queue_worker_commands
from evalsite.workers import STOP_SECONDS, WorkerGroup, exit_on_termination
from generation.demo import DEMO_SYSTEM

# The demo's workers: one per queue, as `manage.py workers` runs them, one task at a time.
DEMO_CONCURRENCY = dict.fromkeys(ONE_MACHINE, 1)


class Command(BaseCommand):
    help = (
        "Run the whole platform on one machine: migrate, build the demo campaign, start "
        "the Celery workers (one per queue, as `manage.py workers`), and serve the site."
    )

    def add_arguments(self, parser):
        parser.add_argument("addrport", nargs="?", default="127.0.0.1:8000")
        parser.add_argument("--no-demo", action="store_true")
        parser.add_argument(
            "--no-worker", action="store_true", help="when workers run elsewhere (production)"
        )

    def handle(self, addrport, no_demo, no_worker, **options):
        exit_on_termination()
        call_command("migrate", verbosity=0)
        if not no_demo and not Campaign.objects.filter(slug=DEMO_SLUG).exists():
            call_command("demo")
        self.ensure_organiser()
        workers = None
        try:
            workers = None if no_worker else self.start_workers()
            self.print_start_pages(addrport)
            call_command("runserver", addrport, use_reloader=False)
        finally:
            if workers:
                self.stop_workers(workers)

    def ensure_organiser(self) -> None:
        users = get_user_model().objects
        if settings.DEBUG and not users.filter(is_superuser=True).exists():
            users.create_superuser("admin", "admin@example.org", "admin")
            self.stdout.write("Created the organiser account admin / admin (DEBUG only).")

    def print_start_pages(self, addrport: str) -> None:
        organiser = (
            "admin / admin on a fresh database"
            if settings.DEBUG
            else "make an account with `manage.py createsuperuser`"
        )
        entry = reverse("annotation:entry", args=[DEMO_SLUG, QUALITY])
        self.stdout.write(
            self.style.SUCCESS(
                f"Annotators: http://{addrport}{entry}?PROLIFIC_PID=try-me&SESSION_ID=try-me\n"
                f"Organisers: http://{addrport}{reverse('admin:index')} ({organiser})\n"
                f"The demo's hosted system {DEMO_SYSTEM} gets its outputs from the admin "
                "(Hosted systems, 'Generate outputs') or "
                f"`manage.py generate {DEMO_SLUG} {DEMO_SYSTEM}`."
            )
        )

    def start_workers(self) -> WorkerGroup:
        workers = WorkerGroup(queue_worker_commands(DEMO_CONCURRENCY), settings.BASE_DIR)
        pids = workers.start()
        self.stdout.write(f"Started the Celery workers, one per queue (pids {pids}).")
        return workers

    def stop_workers(self, workers: WorkerGroup) -> None:
        # A second TERM while the workers finish their tasks must not abandon them half-way.
        for signum in (signal.SIGTERM, signal.SIGHUP):
            signal.signal(signum, signal.SIG_IGN)
        workers.stop(STOP_SECONDS)
        self.stdout.write("Stopped the Celery workers.")
