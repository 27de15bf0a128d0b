"""A small copy of the published E2E folder (../shared/data/e2e), laid out as it is: the
test set's first few MRs with their references, every system's outputs for them (each file
with its own quirks: byte-order marks, CR CR LF line ends, single quotes), and the quality
ratings of HITs on them. For tests that run what a user runs on the whole folder, in
seconds rather than minutes."""

import csv
import io
from pathlib import Path


def first_mrs(source: Path, count: int) -> list[str]:
    mrs: list[str] = []
    with (source / "testset_w_refs.csv").open(newline="", encoding="utf-8-sig") as file:
        for row in csv.DictReader(file):
            if row["mr"] not in mrs:
                if len(mrs) == count:
                    break
                mrs.append(row["mr"])
    return mrs


def csv_rows_of(path: Path, mrs: set[str], out: Path) -> int:
    """The CSV file's rows whose `mr` is one of `mrs` (cells may hold line breaks)."""
    with path.open(newline="", encoding="utf-8-sig") as file:
        reader = csv.DictReader(file)
        rows = [row for row in reader if row["mr"] in mrs]
        text = io.StringIO()
        writer = csv.DictWriter(text, fieldnames=reader.fieldnames or [])
        writer.writeheader()
        writer.writerows(rows)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(text.getvalue(), encoding="utf-8")
    return len(rows)


def output_lines_of(path: Path, mrs: set[str], out: Path) -> None:
    """The outputs file's header and the lines of `mrs`, byte for byte (quirks kept)."""
    lines = path.read_bytes().split(b"\n")
    ends = tuple(f"{mr}{quote}".encode() for mr in mrs for quote in ('"', "'", "\t"))
    kept = [lines[0], *(line for line in lines[1:] if any(end in line for end in ends))]
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_bytes(b"\n".join(kept) + b"\n")


def e2e_subset(source: Path, folder: Path, mrs: int = 4) -> Path:
    """`folder` made a copy of the E2E folder `source` with its first `mrs` MRs only."""
    chosen = set(first_mrs(source, mrs))
    csv_rows_of(source / "testset_w_refs.csv", chosen, folder / "testset_w_refs.csv")
    for path in sorted((source / "outputs").glob("*.tsv")):
        output_lines_of(path, chosen, folder / "outputs" / path.name)
    ratings = source / "human_ratings" / "quality.csv"
    csv_rows_of(ratings, chosen, folder / "human_ratings" / "quality.csv")
    return folder
