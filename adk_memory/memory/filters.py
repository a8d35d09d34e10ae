"""Memory Bank's filters: AIP-160 expressions and metadata filter groups, compiled to one
PostgreSQL jsonpath predicate.

Owns: the grammar adk-memory reads (the subset of AIP-160 Memory Bank documents for memories:
`fact`, `create_time`, `update_time`, `topics`, `metadata.KEY`, and `scope.KEY` with = and !=;
`AND`, `OR` (which binds tighter, as AIP-160 says), `NOT` / `-`, parentheses; `=`, `!=`, `<`,
`<=`, `>`, `>=`, and `:` (has: a topic among the memory's, a substring of the fact, any case)),
the labels filter of
revision listings (`labels.KEY="VALUE"` joined by AND), and the compilation of an expression and
of Memory Bank's `filter_groups` (an OR of ANDs of metadata conditions) into a jsonpath over a
memory's JSON (`store.sql.filter_document`, built with the fields it names), each value passed
as a jsonpath variable, so no text of the caller's becomes SQL or jsonpath syntax but field
names from a closed list and the escaped pattern of a `:` on the fact. It never touches the
database.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any

from ..errors import InputValidationError
from .models import MetadataCondition, MetadataConjunction

MAX_FILTER_LENGTH = 4000
"""The longest expression read (a bound on the work one request can ask for)."""

_TOKEN = re.compile(
    r"""\s*(?:
        (?P<string>"(?:[^"\\]|\\.)*")
      | (?P<op><=|>=|!=|=|<|>|:)
      | (?P<paren>[()])
      | (?P<word>[A-Za-z_][A-Za-z0-9_.\-]*|-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?|-)
    )""",
    re.VERBOSE,
)
_OPS = {"=": "==", "!=": "!=", "<": "<", "<=": "<=", ">": ">", ">=": ">="}
_TIMES = {"create_time": "create_time", "createtime": "create_time",
          "update_time": "update_time", "updatetime": "update_time"}  # fmt: skip
DOCUMENT_FIELDS = ("fact", "create_time", "update_time", "topics", "metadata", "scope")
"""The fields of a memory's document a filter is evaluated on (`store.sql.filter_document`):
each one a predicate names is a key of its variables, so the document holds only those."""
_FIELDS = frozenset(DOCUMENT_FIELDS)
METADATA_ONLY = "_metadata_only"
"""The variables' key of a predicate on metadata alone: its paths start at the metadata."""
_TOPIC_FIELDS = {
    "topics",
    "topics.managed_memory_topic",
    "topics.custom_memory_topic_label",
    "topics.managedmemorytopic",
    "topics.custommemorytopiclabel",
}


def _bad(message: str) -> InputValidationError:
    return InputValidationError(f"Invalid filter: {message}.")


def _tokens(text: str) -> list[tuple[str, str]]:
    tokens: list[tuple[str, str]] = []
    position = 0
    text = text.rstrip()
    while position < len(text):
        match = _TOKEN.match(text, position)
        if match is None or match.end() == position:
            raise _bad(f"cannot read {text[position : position + 20]!r}")
        kind = match.lastgroup or ""
        tokens.append((kind, match.group(kind)))
        position = match.end()
    return tokens


@dataclass
class _Compiler:
    """Builds one jsonpath predicate; `variables` holds the caller's values by name."""

    variables: dict[str, Any] = field(default_factory=dict)

    def uses(self, name: str) -> None:
        """Note that the predicate reads the document's field `name`: the document is built
        with the fields named among the variables' keys (`store.sql.filter_document`), which
        never clash with the values' names (`v0`, `v1`, ...)."""
        self.variables[name] = True

    def var(self, value: Any) -> str:
        name = f"v{len(self.variables)}"
        self.variables[name] = value
        return f"${name}"

    def compare(self, name: str, op: str, value: Any) -> str:
        """One comparison of a field of the memory's JSON document with a value."""
        key = name.lower()
        field_name = _TIMES.get(key) or key.split(".", 1)[0]
        if field_name in _FIELDS:
            self.uses(field_name)
        if key == "fact":
            if op == ":":
                pattern = json.dumps(re.sub(r"([\\.^$|?*+()\[\]{}])", r"\\\1", str(value)))
                return f'($.fact like_regex {pattern} flag "i")'
            return self._scalar("$.fact", op, str(value), name)
        if key in _TIMES:
            return self._scalar(f"$.{_TIMES[key]}", op, _epoch(value, name), name)
        if key in _TOPIC_FIELDS:
            if op not in ("=", ":", "!="):
                raise _bad(f"topics take =, != or :, not {op}")
            found = f"exists($.topics[*] ? (@ == {self.var(str(value))}))"
            return f"!{found}" if op == "!=" else found
        if key.startswith("metadata.") and len(name) > len("metadata."):
            return self.metadata(name[len("metadata.") :], op, value)
        if key.startswith("scope.") and len(name) > len("scope.") and op in ("=", "!="):
            path = f"$.scope.{json.dumps(name[len('scope.') :])}"
            found = f"exists({path} ? (@ == {self.var(str(value))}))"
            return f"!{found}" if op == "!=" else found
        raise _bad(
            f"unknown field or operator: {name} {op} (fields: fact, create_time, update_time, "
            "topics, metadata.KEY, scope.KEY)"
        )

    def _scalar(self, path: str, op: str, value: Any, name: str) -> str:
        if op not in _OPS:
            raise _bad(f"{name} takes =, !=, <, <=, > or >=, not {op}")
        return f"({path} {_OPS[op]} {self.var(value)})"

    def metadata(self, key: str, op: str, value: Any, negate: bool = False) -> str:
        """A metadata condition: the memory has the key and its value compares true; negated,
        it has no such value (a memory without the key is not excluded by a negation)."""
        if op == ":":
            op = "="
        if op == "!=":
            op, negate = "=", not negate
        if op not in _OPS:
            raise _bad(f"metadata takes =, !=, <, <=, > or >=, not {op}")
        self.uses("metadata")
        found = f"exists($.metadata.{json.dumps(key)} ? (@ {_OPS[op]} {self.var(value)}))"
        return f"!{found}" if negate else found


def _moment(value: Any, name: str) -> datetime:
    """An RFC 3339 time (a naive one is UTC)."""
    try:
        moment = datetime.fromisoformat(str(value).replace("Z", "+00:00").replace("z", "+00:00"))
    except ValueError as exc:
        raise _bad(f"{name} needs an RFC 3339 time, got {value!r}") from exc
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=timezone.utc)


def _epoch(value: Any, name: str) -> float:
    """An RFC 3339 time as the seconds since the epoch the document holds."""
    return _moment(value, name).timestamp()


def _literal(kind: str, text: str) -> Any:
    """A value as written: a quoted string, true/false, a number, else the bare word."""
    if kind == "string":
        try:
            return json.loads(text)
        except ValueError as exc:
            raise _bad(f"bad string {text}") from exc
    if text in ("true", "false"):
        return text == "true"
    try:
        return float(text) if re.fullmatch(r"-?\d+(\.\d+)?([eE][+-]?\d+)?", text) else text
    except ValueError:
        return text


class _Parser:
    """Recursive descent over the tokens: expression = conjunct (AND conjunct)*; conjunct =
    term (OR term)*; term = [NOT | -] (comparison | "(" expression ")")."""

    def __init__(self, tokens: list[tuple[str, str]], compiler: _Compiler) -> None:
        self.tokens = tokens
        self.at = 0
        self.compiler = compiler

    def peek(self) -> tuple[str, str] | None:
        return self.tokens[self.at] if self.at < len(self.tokens) else None

    def take(self) -> tuple[str, str]:
        token = self.peek()
        if token is None:
            raise _bad("the expression ends too soon")
        self.at += 1
        return token

    def expression(self) -> str:
        parts = [self.conjunct()]
        while self.peek() == ("word", "AND") or self._implicit_and():
            if self.peek() == ("word", "AND"):
                self.take()
            parts.append(self.conjunct())
        return parts[0] if len(parts) == 1 else "(" + " && ".join(parts) + ")"

    def _implicit_and(self) -> bool:
        """AIP-160: terms side by side are ANDed."""
        token = self.peek()
        return token is not None and token != ("paren", ")") and token[1] != "OR"

    def conjunct(self) -> str:
        parts = [self.term()]
        while self.peek() == ("word", "OR"):
            self.take()
            parts.append(self.term())
        return parts[0] if len(parts) == 1 else "(" + " || ".join(parts) + ")"

    def term(self) -> str:
        kind, text = self.take()
        if (kind, text) in (("word", "NOT"), ("word", "-")):
            return f"!({self.term()})"
        if (kind, text) == ("paren", "("):
            inner = self.expression()
            if self.take() != ("paren", ")"):
                raise _bad("a parenthesis is not closed")
            return inner
        if kind != "word":
            raise _bad(f"expected a field name, got {text!r}")
        op_kind, op = self.take()
        if op_kind != "op":
            raise _bad(f"expected an operator after {text!r}, got {op!r}")
        value_kind, value = self.take()
        if value_kind not in ("string", "word"):
            raise _bad(f"expected a value after {text} {op}, got {value!r}")
        return self.compiler.compare(text, op, _literal(value_kind, value))


def compile_filter(
    expression: str | None, groups: list[MetadataConjunction] | None
) -> tuple[str, dict[str, Any]] | None:
    """The jsonpath predicate (and its variables) that holds for a memory matching both the
    AIP-160 `expression` and any of the metadata `groups`; None when neither is given.
    InputValidationError for an expression that cannot be read."""
    compiler = _Compiler()
    parts: list[str] = []
    if expression is not None and expression.strip():
        if len(expression) > MAX_FILTER_LENGTH:
            raise _bad(f"at most {MAX_FILTER_LENGTH} characters")
        parser = _Parser(_tokens(expression), compiler)
        parts.append(parser.expression())
        if parser.peek() is not None:
            raise _bad(f"unexpected {parser.peek()[1]!r}")  # type: ignore[index]
    if groups:
        parts.append("(" + " || ".join(_group(compiler, g) for g in groups) + ")")
    if not parts:
        return None
    path, variables = " && ".join(parts), compiler.variables
    if variables.keys() & _FIELDS == {"metadata"}:  # evaluated on the metadata itself
        del variables["metadata"]
        return path.replace("$.metadata.", "$."), {**variables, METADATA_ONLY: True}
    return path, variables


def time_bounds(expression: str) -> tuple[str | None, datetime | None, datetime | None]:
    """An expression's top-level `update_time > T` and `update_time < T` terms (ANDed with the
    rest) as the bounds `MemoryFilter.updated_after` / `updated_before` state as plain
    comparisons, and the rest of the expression (None: nothing left), so the commonest filter,
    a time window, needs no per-row document. Call it on an expression `compile_filter`
    read."""
    conjuncts: list[list[tuple[str, str]]] = [[]]
    depth = 0
    for token in _tokens(expression):
        depth += {("paren", "("): 1, ("paren", ")"): -1}.get(token, 0)
        if depth == 0 and token == ("word", "AND"):
            conjuncts.append([])
        else:
            conjuncts[-1].append(token)
    after: datetime | None = None
    before: datetime | None = None
    rest: list[str] = []
    for terms in conjuncts:
        name, op, value = terms if len(terms) == 3 else (("", ""), ("", ""), ("", ""))
        if _TIMES.get(name[1].lower()) != "update_time" or op[1] not in (">", "<"):
            rest.append(" ".join(text for _, text in terms))
            continue
        moment = _moment(_literal(*value), name[1])
        if op[1] == ">":
            after = moment if after is None else max(after, moment)
        else:
            before = moment if before is None else min(before, moment)
    return (" AND ".join(rest) or None), after, before


def _group(compiler: _Compiler, group: MetadataConjunction) -> str:
    conditions = [_condition(compiler, c) for c in group.filters]
    return "(" + " && ".join(conditions) + ")" if conditions else "true"


def _condition(compiler: _Compiler, condition: MetadataCondition) -> str:
    op = {"EQUAL": "=", "GREATER_THAN": ">", "LESS_THAN": "<"}[condition.op]
    value = condition.value
    if isinstance(value, datetime):
        value = value.isoformat()
    return compiler.metadata(condition.key, op, value, negate=condition.negate)


_LABEL = re.compile(r'\s*labels\.([A-Za-z0-9_\-]+)\s*=\s*("(?:[^"\\]|\\.)*"|[^\s"]+)\s*')


def revision_label_filter(expression: str | None) -> dict[str, str]:
    """Memory Bank's revision filter, `labels.KEY="VALUE"` joined by AND, as the labels every
    revision listed must carry."""
    if expression is None or not expression.strip():
        return {}
    wanted: dict[str, str] = {}
    for part in re.split(r"\s+AND\s+", expression.strip()):
        match = _LABEL.fullmatch(part)
        if match is None:
            raise _bad(f'a revision filter is labels.KEY="VALUE" joined by AND, got {part!r}')
        key, value = match.groups()
        wanted[key] = str(_literal("string", value)) if value.startswith('"') else value
    return wanted
