"""A datasheet (evalsite/datasheet.py) as Markdown, for people to read and complete.

Text that comes from the campaign (its name, system names, labels and descriptions, the
questions, the instructions) is untrusted: it is escaped so that it reads as the text it is,
never as HTML, a link, an image, a heading, a list or a table cell it did not ask for.
"""

import html
import re
from typing import Any

# CommonMark lets any ASCII punctuation be escaped with a backslash. These can open or
# close markup anywhere in a line: code, emphasis, links and images, table cells,
# strikethrough. '<', '>' and '&' (HTML, autolinks, entities) become entities instead.
MARKUP = re.compile(r"([\\`*_\[\]|~])")
# These only at the start of a line: headings, list items, setext underlines, numbered items.
BLOCK_MARK = re.compile(r"^([#+=-])")
NUMBERED_ITEM = re.compile(r"^(\d+)([.)])")


def inline(text: Any) -> str:
    """Untrusted text for one line or one table cell: line breaks would end the cell or
    start a block, so whitespace runs become one space."""
    flat = " ".join(str(text).split())
    escaped = MARKUP.sub(r"\\\1", html.escape(flat, quote=False))
    return NUMBERED_ITEM.sub(r"\1\\\2", BLOCK_MARK.sub(r"\\\1", escaped))


def block(text: str) -> list[str]:
    """Untrusted text of several lines, as a quotation keeping its lines."""
    return [f"> {inline(line)}".rstrip() for line in text.splitlines()]


def render_markdown(sheet: dict) -> str:
    campaign = sheet["campaign"]
    lines = [
        f"# HEDS {sheet['heds_version']} datasheet: {inline(campaign['name'])}",
        "",
        f"Campaign {inline(campaign['slug'])}, filled in by the platform on "
        f"{sheet['generated_at']}. Questions it cannot answer are marked *to be "
        "filled by hand* and listed at the end.",
        "",
    ]
    for number, section in sheet["sections"].items():
        lines += [f"## {number}. {inline(section['title'])}", ""]
        lines += questions_md(section.get("questions", {}))
        if "systems" in section:
            lines += systems_table(section["systems"])
        for criterion in section.get("criteria", []):
            lines += [f"### Criterion: {inline(criterion['criterion'])}", ""]
            lines += questions_md(criterion["questions"])
    lines += ["## To be filled by hand", ""]
    lines += [to_fill_line(entry) for entry in sheet["to_be_filled_by_hand"]]
    return "\n".join(lines) + "\n"


def questions_md(questions: dict) -> list[str]:
    lines = []
    for qid, entry in questions.items():
        lines += [f"**{qid}** {inline(entry['question'])}", ""]
        if entry["answer"] is not None:
            lines += value_md(entry["answer"]) + [""]
        if entry.get("facts"):
            lines += ["Counted by the platform:", ""] + value_md(entry["facts"]) + [""]
        if entry["by_hand"]:
            lines += [f"*To be filled by hand:* {inline(entry['by_hand'])}", ""]
    return lines


def value_md(value: Any) -> list[str]:
    if isinstance(value, str) and "\n" in value:
        return block(value)
    if isinstance(value, list):
        return [f"- {flat(item)}" for item in value] or ["none"]
    if isinstance(value, dict):
        return [line for key, item in value.items() for line in entry_md(key, item)] or ["none"]
    return [flat(value)]


def entry_md(key: str, value: Any) -> list[str]:
    if isinstance(value, str) and "\n" in value:
        return [f"- {inline(key)}:", ""] + [f"  {line}" for line in block(value)] + [""]
    if isinstance(value, list) and value and all(isinstance(item, dict) for item in value):
        return [f"- {inline(key)}:"] + [f"  - {flat(item)}" for item in value]
    return [f"- {inline(key)}: {flat(value) if value != '' else 'none'}"]


def flat(value: Any) -> str:
    """Any value on one line."""
    if value is None or value == [] or value == {}:
        return "none"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, int | float):
        return str(value)
    if isinstance(value, list):
        return "; ".join(flat(item) for item in value)
    if isinstance(value, dict):
        return ", ".join(f"{inline(key)}: {flat(item)}" for key, item in value.items())
    return inline(value)


def systems_table(systems: list[dict]) -> list[str]:
    lines = [
        "Systems and their outputs:",
        "",
        "| system | label | outputs | imported | generated | hosted by | active |",
        "|---|---|---:|---:|---:|---|---|",
    ]
    for system in systems:
        cells = [
            system["name"],
            system["label"],
            system["outputs"],
            system["imported"],
            system["generated"],
            system["hosted"],
            system["active"],
        ]
        lines.append("| " + " | ".join(flat(cell) for cell in cells) + " |")
    lines.append("")
    described = [system for system in systems if system["description"]]
    if described:
        lines += [f"- {flat(s['name'])}: {flat(s['description'])}" for s in described] + [""]
    return lines


def to_fill_line(entry: dict) -> str:
    where = f" ({inline(entry['criterion'])})" if "criterion" in entry else ""
    return f"- **{entry['id']}**{where} {inline(entry['question'])} — {inline(entry['what'])}"
