from django.core.management.base import BaseCommand, CommandError
from django.db import transaction

from generation.models import GenerationJob, HostedSystem
from generation.service import new_job, request_generation, run_job


class Command(BaseCommand):
    help = (
        "Generate the outputs a hosted system lacks for its campaign's items: here and now, "
        "or with --queue on the generation workers."
    )

    def add_arguments(self, parser):
        parser.add_argument("campaign", help="campaign slug")
        parser.add_argument("system", help="system name")
        parser.add_argument(
            "--queue",
            action="store_true",
            help="send the job to the 'generation' queue instead of running here",
        )

    def handle(self, campaign, system, queue, **options):
        hosted = (
            HostedSystem.objects.select_related("system__campaign")
            .filter(system__campaign__slug=campaign, system__name=system)
            .first()
        )
        if hosted is None:
            raise CommandError(f"no hosted system '{system}' in campaign '{campaign}'")
        if queue:
            with transaction.atomic():
                job = request_generation(hosted)
            self.stdout.write(f"Queued job {job.pk} for {job.items_total} items.")
            return
        job = new_job(hosted)
        run_job(job, on_batch=self.print_progress)
        job.refresh_from_db()
        self.stdout.write("")
        self.stdout.write(
            self.style.SUCCESS(
                f"{job.outputs_created} outputs created for {job.items_total} items lacking one "
                f"({job.items_failed} failed) in {job.seconds:.2f} s."
            )
        )
        for item_id, error in job.item_errors[:10]:
            self.stdout.write(f"  item {item_id}: {error}")

    def print_progress(self, job: GenerationJob) -> None:
        self.stdout.write(f"  {job.items_done}/{job.items_total} items", ending="\r")
