import signal

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError

from evalsite.celery import ONE_MACHINE, queue_worker_commands
from evalsite.workers import WorkerGroup, exit_on_termination

HELP_OF_QUEUE = {
    "default": "rankings and the sweeps; beat runs in this worker (at least 1)",
    "long": "metric runs, uploads and published datasets (minutes each)",
    "generation": "hosted models and automatic judges (0 where GPU machines serve it)",
    "outbound": "webhook deliveries and Prolific's API",
}


class Command(BaseCommand):
    help = (
        "Run one machine's Celery workers: a process per queue, so that rankings never wait "
        "behind long jobs or slow outside servers; beat in the rankings' worker. Stops them "
        "together on SIGTERM or Ctrl-C, and stops the rest when one exits."
    )

    def add_arguments(self, parser):
        for queue, count in ONE_MACHINE.items():
            parser.add_argument(
                f"--{queue}",
                type=int,
                default=count,
                metavar="N",
                help=f"tasks of the {queue} queue at once: {HELP_OF_QUEUE[queue]} ({count})",
            )

    def handle(self, **options):
        concurrency = {queue: options[queue] for queue in ONE_MACHINE}
        if concurrency["default"] < 1:
            raise CommandError("--default must be at least 1: that worker ranks and runs beat")
        exit_on_termination()
        group = WorkerGroup(queue_worker_commands(concurrency), settings.BASE_DIR)
        try:
            pids = group.start()
            running = ", ".join(f"{q} x{n}" for q, n in concurrency.items() if n)
            self.stdout.write(f"Started Celery workers ({running}): pids {pids}")
            code = group.wait()
        except KeyboardInterrupt:  # Ctrl-C: the workers got it too, and shut down
            code = 0
        finally:
            for signum in (signal.SIGTERM, signal.SIGHUP, signal.SIGINT):
                signal.signal(signum, signal.SIG_IGN)  # a second signal must not abandon them
            group.stop()
            self.stdout.write("Stopped the Celery workers.")
        if code:
            raise CommandError(f"a worker exited with {code}; the others were stopped")
