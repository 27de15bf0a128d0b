"""The Human Evaluation Datasheet, version 3.0 (Belz and Thomson, "HEDS 3.0: The Human
Evaluation Data Sheet Version 3.0", 2024; GEM 2025): its sections and questions, and the
shape of a question as the platform's datasheets hold it (evalsite/datasheet.py fills them).

HEDS 3.0 has five sections: 1 main reference and resources (1.1.1-1.3.2.3), 2 evaluated
systems (2.1-2.5), 3 sample, evaluators and experimental design (3.1.1-3.3.8), 4 quality
criteria, once per criterion (4.1.1-4.3.12.2), 5 ethics (5.1-5.4). The question ids here
are those of the published HEDS 2.0 sheet, whose outline 3.0 keeps; where 3.0 splits a
question further (1.x.y, 4.3.12) it is answered at the level above. The wording is ours,
shortened; the sheet itself has the full questions and their options.
"""

from typing import Any

HEDS_VERSION = "3.0"
SECTION_TITLES = {
    "1": "Main reference and supplementary resources",
    "2": "Evaluated systems",
    "3": "Sample of system outputs, evaluators and experimental design",
    "4": "Definition and operationalisation of quality criteria",
    "5": "Ethics",
}
QUESTIONS = {
    "1.1": "Link to the paper reporting the evaluation experiment (or 'for preregistration')",
    "1.2": "Link to the resources used in the experiment (system outputs, tools, ...)",
    "1.3": "Name, affiliation and email of the person completing this sheet and of the contact",
    "2.1": "What type of input do the evaluated systems take?",
    "2.2": "What type of output do the evaluated systems generate?",
    "2.3": "What task do the evaluated systems perform in mapping inputs to outputs?",
    "2.4": "Input language(s)",
    "2.5": "Output language(s)",
    "3.1.1": "How many system outputs (evaluation items) are evaluated per system?",
    "3.1.2": "How are system outputs (evaluation items) selected for inclusion?",
    "3.1.3": "What is the statistical power of the sample size?",
    "3.2.1": "How many evaluators are there in this experiment?",
    "3.2.2": "What kind of evaluators are in this experiment (expert, paid, known, ...)?",
    "3.2.3": "How are evaluators recruited?",
    "3.2.4": "What training and/or practice are evaluators given before the evaluation?",
    "3.2.5": "What other characteristics do the evaluators have?",
    "3.3.1": "Has the experimental design been preregistered? If yes, on which registry?",
    "3.3.2": "How are responses collected?",
    "3.3.3": "What quality assurance methods are used?",
    "3.3.4": "What do evaluators see when carrying out evaluations?",
    "3.3.5": "How free are evaluators regarding when and how quickly to carry out evaluations?",
    "3.3.6": "Are evaluators told they can ask questions or give feedback?",
    "3.3.7": "What are the experimental conditions in which evaluators carry out evaluations?",
    "3.3.8": "Unless at a place of the evaluators' own choosing, describe the conditions",
    "4.1.1": "What type of quality is assessed (correctness, goodness, feature)?",
    "4.1.2": "Which aspect of system outputs is assessed (form, content, both)?",
    "4.1.3": "Is each output assessed in its own right or against a frame of reference?",
    "4.2.1": "Does an individual assessment involve an objective or a subjective judgment?",
    "4.2.2": "Are outputs assessed in absolute or relative terms?",
    "4.2.3": "Is the evaluation intrinsic or extrinsic?",
    "4.3.1": "What is the criterion called in explanations and interfaces for evaluators?",
    "4.3.2": "What definition of the criterion are evaluators given?",
    "4.3.3": "Size of the scale or other rating instrument",
    "4.3.4": "List or range of possible values of the rating instrument",
    "4.3.5": "How is the rating instrument presented to evaluators?",
    "4.3.6": "If there is no rating instrument, what task do evaluators perform?",
    "4.3.7": "Verbatim question, prompt or instruction shown with each assessment",
    "4.3.8": "Form of response elicitation",
    "4.3.9": "How are raw responses aggregated or processed into reported scores?",
    "4.3.10": "Methods for determining effect size and significance",
    "4.3.11": "Has inter- and intra-annotator agreement been measured? Method and scores",
    "5.1": "Has the experiment been approved by a research ethics committee? Which?",
    "5.2": "Do outputs or responses contain personal data (GDPR Art. 4(1))? How addressed?",
    "5.3": "Do they contain special category information (GDPR Art. 9(1))? How addressed?",
    "5.4": "Have impact assessments been carried out? Approach and outcomes",
}


def question(qid: str, answer: Any = None, by_hand: str | None = None, **facts: Any) -> dict:
    """One question: its `answer` (None where the platform cannot know it), `by_hand`
    saying what is left to a person, and `facts` the platform counted to help them."""
    if answer is None and by_hand is None:
        by_hand = "the platform cannot know this"
    entry: dict[str, Any] = {"question": QUESTIONS[qid], "answer": answer, "by_hand": by_hand}
    if facts:
        entry["facts"] = facts
    return entry


def question_groups(sections: dict) -> list[tuple[str | None, dict]]:
    """(criterion or None, questions) of every section: section 4 has one per criterion."""
    groups: list[tuple[str | None, dict]] = []
    for section in sections.values():
        groups.append((None, section.get("questions", {})))
        groups += [(c["criterion"], c["questions"]) for c in section.get("criteria", [])]
    return groups


def to_be_filled(sections: dict) -> list[dict]:
    """What a person must still fill in: every question with a `by_hand`."""
    return [
        {
            "id": qid,
            **({"criterion": criterion} if criterion else {}),
            "question": entry["question"],
            "what": entry["by_hand"],
        }
        for criterion, questions in question_groups(sections)
        for qid, entry in questions.items()
        if entry["by_hand"]
    ]
