import signal
import subprocess

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.core.management.base import BaseCommand
from django.urls import reverse

from annotation.demo import DEMO_SLUG
from annotation.models import QUALITY, Campaign
from evalsite.celery import worker_command
from generation.demo import DEMO_SYSTEM

WORKER_STOP_SECONDS = 30


def exit_on_signal(signum, frame):
    # SystemExit unwinds through runserver, so the `finally` in handle() stops the worker.
    raise SystemExit(0)


class Command(BaseCommand):
    help = (
        "Run the whole platform on one machine: migrate, build the demo campaign, start a "
        "Celery worker process (every queue), and serve the site."
    )

    def add_arguments(self, parser):
        parser.add_argument("addrport", nargs="?", default="127.0.0.1:8000")
        parser.add_argument("--no-demo", action="store_true")
        parser.add_argument(
            "--no-worker", action="store_true", help="when workers run elsewhere (production)"
        )

    def handle(self, addrport, no_demo, no_worker, **options):
        # kill, docker stop, systemd and a closed terminal end this process by a signal whose
        # default action would leave the worker running without its parent.
        for signum in (signal.SIGTERM, signal.SIGHUP):
            signal.signal(signum, exit_on_signal)
        call_command("migrate", verbosity=0)
        if not no_demo and not Campaign.objects.filter(slug=DEMO_SLUG).exists():
            call_command("demo")
        self.ensure_organiser()
        worker = None
        try:
            worker = None if no_worker else self.start_worker()
            self.print_start_pages(addrport)
            call_command("runserver", addrport, use_reloader=False)
        finally:
            if worker:
                self.stop_worker(worker)

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

    def start_worker(self) -> subprocess.Popen:
        command = worker_command("--concurrency=2")
        worker = subprocess.Popen(command, cwd=settings.BASE_DIR)
        self.stdout.write(f"Started a Celery worker (pid {worker.pid}): {' '.join(command[1:])}")
        return worker

    def stop_worker(self, worker: subprocess.Popen) -> None:
        # A second TERM while the worker finishes its tasks must not abandon it half-way.
        for signum in (signal.SIGTERM, signal.SIGHUP):
            signal.signal(signum, signal.SIG_IGN)
        worker.terminate()
        try:
            worker.wait(timeout=WORKER_STOP_SECONDS)
        except subprocess.TimeoutExpired:
            worker.kill()
            worker.wait()
        self.stdout.write(f"Stopped the Celery worker (pid {worker.pid}).")
