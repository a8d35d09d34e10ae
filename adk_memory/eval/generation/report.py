"""The generation harness's report: one row per case, micro-averaged figures, and its plain-text
form. It holds results only: it never runs a case nor matches facts."""

from __future__ import annotations

from .._datasets import Frozen as _Frozen


class FactPair(_Frozen):
    """A generated fact credited with an expected one."""

    generated: str
    expected: str


class _Scores(_Frozen):
    """Matched counts and the figures derived from them (None where undefined: no expected or
    no generated facts)."""

    true_positives: int
    false_positives: int
    false_negatives: int
    precision: float | None
    recall: float | None
    f1: float | None


class CaseResult(_Scores):
    """How one case went: what the scope ended with, how it paired up, and its figures."""

    case_id: str
    expected: list[str]
    generated: list[str]
    """The scope's memories after generation (sorted), existing ones that stayed included."""
    matched: list[FactPair]
    missed: list[str]
    """Expected facts nothing generated stated (false negatives)."""
    extra: list[str]
    """Memories no expected fact accounts for (false positives)."""
    created: int
    updated: int
    deleted: int
    """What generation did to the scope, from the operation's `generated_memories`."""
    seconds: float
    """Wall time of `generate_memories` (until the job was done)."""
    error: str | None = None
    """Why generation failed (dead-lettered or timed out); None when it succeeded."""

    @property
    def abstention(self) -> bool:
        """Nothing should have been remembered."""
        return not self.expected

    @property
    def abstained(self) -> bool:
        """Nothing should have been remembered, and nothing was."""
        return not self.expected and not self.generated


class GenerationReport(_Scores):
    """The outcome of `evaluate_generation`: micro-averaged figures and one row per case."""

    dataset: str
    model: str | None
    matcher: str
    embedder: str | None
    """The service's embedder class (None: consolidation candidates found by full text)."""
    cases: list[CaseResult]
    expected: int
    generated: int
    abstention_cases: int
    """Cases where nothing should be remembered."""
    abstained: int
    """Of those, the ones where nothing was."""
    abstention_accuracy: float | None
    """abstained / abstention_cases (None without such cases)."""
    errors: int
    seconds: float

    def case(self, case_id: str) -> CaseResult:
        """The result of one case; KeyError if there is none."""
        for result in self.cases:
            if result.case_id == case_id:
                return result
        raise KeyError(case_id)


def _figure(value: float | None) -> str:
    return "-" if value is None else f"{value:.3f}"


def format_generation_report(report: GenerationReport) -> str:
    """The report as plain text: the setup, a table (one row per case, then the micro totals),
    abstention accuracy, and what each imperfect case missed or added (where to look first)."""
    lines = [
        f"Memory generation quality: {report.dataset} ({len(report.cases)} cases, "
        f"{report.expected} expected memories)",
        f"Model: {report.model or 'none'} | Matcher: {report.matcher} | "
        f"Embedder: {report.embedder or 'none (full-text candidates)'}",
        "",
    ]
    header = ["case", "exp", "got", "TP", "FP", "FN", "P", "R", "F1", "+/~/-", "s"]
    rows = [
        [
            r.case_id + (" (error)" if r.error else ""),
            str(len(r.expected)),
            str(len(r.generated)),
            str(r.true_positives),
            str(r.false_positives),
            str(r.false_negatives),
            _figure(r.precision),
            _figure(r.recall),
            _figure(r.f1),
            f"{r.created}/{r.updated}/{r.deleted}",
            f"{r.seconds:.2f}",
        ]
        for r in report.cases
    ]
    total = [
        "micro",
        str(report.expected),
        str(report.generated),
        str(report.true_positives),
        str(report.false_positives),
        str(report.false_negatives),
        _figure(report.precision),
        _figure(report.recall),
        _figure(report.f1),
        "",
        f"{report.seconds:.2f}",
    ]
    widths = [max(len(row[i]) for row in [header, *rows, total]) for i in range(len(header))]

    def line(cells: list[str]) -> str:
        first = cells[0].ljust(widths[0])
        rest = (cell.rjust(width) for cell, width in zip(cells[1:], widths[1:], strict=True))
        return "  ".join([first, *rest]).rstrip()

    rule = "  ".join("-" * w for w in widths)
    lines += [line(header), rule, *(line(row) for row in rows), rule, line(total), ""]
    lines.append(
        f"Precision {_figure(report.precision)}  Recall {_figure(report.recall)}  "
        f"F1 {_figure(report.f1)}  (micro-averaged over {report.expected} expected and "
        f"{report.generated} final memories)"
    )
    if report.abstention_cases:
        lines.append(
            f"Abstention accuracy {_figure(report.abstention_accuracy)}: {report.abstained} of "
            f"{report.abstention_cases} cases where nothing should be remembered ended with "
            "nothing"
        )
    lines.append("+/~/- = memories created / updated / deleted by generation")
    if report.errors:
        lines.append(f"Generation errors: {report.errors} (see below)")
    details = [r for r in report.cases if r.missed or r.extra or r.error]
    if details:
        lines += ["", "Cases to look at:"]
    for r in details:
        lines.append(f"- {r.case_id}:")
        if r.error:
            lines.append(f"    error: {r.error}")
        lines += [f"    missed: {fact}" for fact in r.missed]
        lines += [f"    extra:  {fact}" for fact in r.extra]
    return "\n".join(lines)
