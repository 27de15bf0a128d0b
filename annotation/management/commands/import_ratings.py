from django.core.management.base import BaseCommand

from annotation.datafiles.ratings_import import SCORE_COLUMNS, import_ratings
from annotation.datafiles.ratings_layouts import IMPORTERS
from annotation.judging import FORMS

from ._importing import get_campaign, open_file, run_import


class Command(BaseCommand):
    help = (
        "Import crowd ratings: by default in the E2E CrowdFlower format (mr, sys1..k, ref1..k,"
        " quality1..k or natur1..k, check1..k, _worker_id, _started_at, _created_at); with"
        " --form, in that judgment form's layout (da: item,system,annotator,criterion,score"
        " and optionally hit,seconds; pairwise: item,system_a,system_b,annotator,criterion,"
        "winner (a, b or tie) and optionally hit; esa: JSON Lines {item, system, annotator,"
        " criterion, score, spans: [{start, end, severity}]}, offsets in characters of the"
        " output; items by their imported id, systems by name)."
    )

    def add_arguments(self, parser):
        parser.add_argument("campaign", help="campaign slug")
        parser.add_argument("file")
        parser.add_argument(
            "--criterion",
            choices=list(SCORE_COLUMNS),
            help="which scores to read when the file has both (E2E format)",
        )
        parser.add_argument(
            "--form",
            choices=[name for name in FORMS if name in IMPORTERS],
            help="the judgment form whose layout the file is in (the E2E format if not given)",
        )
        parser.add_argument("--create-campaign", action="store_true")

    def handle(self, campaign, file, criterion, form, create_campaign, **options):
        with open_file(file) as (data, name):
            if form:
                work = lambda: IMPORTERS[form](get_campaign(campaign, create_campaign), data, name)  # noqa: E731
            else:
                work = lambda: import_ratings(  # noqa: E731
                    get_campaign(campaign, create_campaign), data, name, criterion=criterion
                )
            run_import(self, work)
