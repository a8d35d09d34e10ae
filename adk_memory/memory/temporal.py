"""Temporal cues in a search query: the time window a question asks about, without a model.

Owns: `find_window`, which reads one expression of time in a query ("last week", "3 days ago",
"in May 2023", "8 May 2023", "2023-05-08", "this morning", "last Tuesday", "summer 2023",
"Christmas 2022"; the common ones also in German, French and Spanish) and turns it into a
half-open window [start, end) of the timezone of the `now` it is read against (UTC when `now`
is naive). A month or day named without a year is its latest occurrence up to `now` (memories
are of the past). Retrieval matches the window against memory time; this module never touches
SQL and never changes the query. The window's words stay in the query: on the long-conversation
set (`benchmarks/memory_recall.py`), whose facts carry their dates as words, removing them cost
the temporal questions 7 points of Recall@10 in full-text and hybrid modes.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import date, datetime, time, timedelta, timezone, tzinfo


@dataclass(frozen=True)
class TimeWindow:
    """The half-open window [start, end) a query's expression of time names; `span` is where
    the expression is in the query (character offsets)."""

    start: datetime
    end: datetime
    span: tuple[int, int]


_MONTHS: dict[str, int] = {}
for _number, _names in enumerate(
    (
        "january jan januar janner janvier enero",
        "february feb februar fevrier febrero",
        "march mar marz mars marzo",
        "april apr avril abril",
        "may mai mayo",
        "june jun juni juin junio",
        "july jul juli juillet julio",
        "august aug aout agosto",
        "september sep sept septembre septiembre setiembre",
        "october oct oktober octobre octubre",
        "november nov novembre noviembre",
        "december dec dezember decembre diciembre",
    ),
    start=1,
):
    _MONTHS.update(dict.fromkeys(_names.split(), _number))

_WEEKDAYS: dict[str, int] = {}
for _number, _names in enumerate(
    (
        "monday montag lundi lunes",
        "tuesday dienstag mardi martes",
        "wednesday mittwoch mercredi miercoles",
        "thursday donnerstag jeudi jueves",
        "friday freitag vendredi viernes",
        "saturday samstag sonnabend samedi sabado",
        "sunday sonntag dimanche domingo",
    )
):
    _WEEKDAYS.update(dict.fromkeys(_names.split(), _number))

# Small counts written as words ("two weeks ago", "vor drei Tagen", "il y a deux jours").
_COUNTS: dict[str, int] = {}
for _number, _names in enumerate(
    (
        "a an one ein einem einer einen un une uno una",
        "two couple zwei deux dos",
        "three drei trois tres",
        "four vier quatre cuatro",
        "five funf cinq cinco",
        "six sechs seis",
        "seven sieben sept siete",
        "eight acht huit ocho",
        "nine neun neuf nueve",
        "ten zehn dix diez",
    ),
    start=1,
):
    _COUNTS.update(dict.fromkeys(_names.split(), _number))

# Units of "N ... ago", by their first letters in each language (tag/tage/tagen, jour/jours,
# dia/dias, semaine, semana, mois, mes/meses, an/ans/annee, ano/anos, jahr/jahren).
_UNITS: dict[str, str] = {
    **dict.fromkeys(("day", "days", "tag", "tage", "tagen", "jour", "jours", "dia", "dias"), "d"),
    **dict.fromkeys(
        ("week", "weeks", "woche", "wochen", "semaine", "semaines", "semana", "semanas"), "w"
    ),
    **dict.fromkeys(("month", "months", "monat", "monate", "monaten", "mois", "mes", "meses"), "m"),
    **dict.fromkeys(
        ("year", "years", "jahr", "jahre", "jahren", "an", "ans", "annee", "annees", "ano", "anos"),
        "y",
    ),
}

_SEASONS = {"spring": (3, 3), "summer": (6, 3), "autumn": (9, 3), "fall": (9, 3), "winter": (12, 3)}


def _alternatives(names: Iterable[str]) -> str:
    """A regex alternation of `names`, longest first (so "sept" is not read as "sep")."""
    return "|".join(sorted(map(re.escape, names), key=len, reverse=True))


_MONTH = rf"(?P<month>{_alternatives(_MONTHS)})\.?"
_WEEKDAY = rf"(?P<weekday>{_alternatives(_WEEKDAYS)})"
_YEAR = r"(?P<year>(?:19|20)\d\d)(?!\d)"
_DAY = r"(?P<day>[0-3]?\d)(?:st|nd|rd|th|er|\.|º)?(?!\d)"
_COUNT = rf"(?P<count>\d{{1,3}}|{_alternatives(_COUNTS)})(?:\s+of)?"
_UNIT = rf"(?P<unit>{_alternatives(_UNITS)})"


def _fold(query: str) -> tuple[str, list[int]]:
    """The query case- and accent-folded (as the patterns are written), with the offset in the
    query of each folded character."""
    folded: list[str] = []
    offsets: list[int] = []
    for i, char in enumerate(query):
        for part in unicodedata.normalize("NFKD", char.casefold()):
            if not unicodedata.combining(part):
                folded.append(part)
                offsets.append(i)
    return "".join(folded), offsets


def _day(d: date, tz: tzinfo) -> datetime:
    return datetime.combine(d, time(), tz)


def _days(first: date, count: int, tz: tzinfo) -> tuple[datetime, datetime]:
    return _day(first, tz), _day(first + timedelta(days=count), tz)


def _months(year: int, month: int, count: int, tz: tzinfo) -> tuple[datetime, datetime]:
    """`count` months from the first of `month` of `year` (month may run past 12)."""
    first_year, first_month = divmod(year * 12 + month - 1, 12)
    last_year, last_month = divmod(year * 12 + month - 1 + count, 12)
    return (
        _day(date(first_year, first_month + 1, 1), tz),
        _day(date(last_year, last_month + 1, 1), tz),
    )


def _easter(year: int) -> date:
    """Western Easter Sunday (the anonymous Gregorian computus)."""
    a = year % 19
    b, c = divmod(year, 100)
    d, e = divmod(b, 4)
    g = (b - (b + 8) // 25 + 1) // 3
    h = (19 * a + b - d - g + 15) % 30
    i, k = divmod(c, 4)
    weekday = (32 + 2 * e + 2 * i - h - k) % 7
    month, day = divmod(h + weekday - 7 * ((a + 11 * h + 22 * weekday) // 451) + 114, 31)
    return date(year, month, day + 1)


def _latest_month(month: int, today: date) -> int:
    """The year of the latest `month` up to `today`."""
    return today.year if month <= today.month else today.year - 1


_Window = tuple[datetime, datetime]
_Rule = Callable[[dict[str, str], date, tzinfo], _Window | None]


def _dated(g: dict[str, str], today: date, tz: tzinfo) -> _Window | None:
    month = int(g["month_number"]) if g.get("month_number") else _MONTHS[g["month"]]
    year = int(g["year"]) if g.get("year") else None
    day = int(g["day"])
    try:
        found = date(year or today.year, month, day)
        if year is None and found > today:
            found = date(today.year - 1, month, day)
    except ValueError:
        return None
    return _days(found, 1, tz)


def _month_of_year(g: dict[str, str], today: date, tz: tzinfo) -> _Window:
    return _months(int(g["year"]), _MONTHS[g["month"]], 1, tz)


def _named_month(g: dict[str, str], today: date, tz: tzinfo) -> _Window:
    month = _MONTHS[g["month"]]
    return _months(_latest_month(month, today), month, 1, tz)


def _season(g: dict[str, str], today: date, tz: tzinfo) -> _Window:
    first, count = _SEASONS[g["season"]]
    return _months(int(g["year"]), first, count, tz)


def _christmas(g: dict[str, str], today: date, tz: tzinfo) -> _Window:
    return _days(date(int(g["year"]), 12, 20), 14, tz)


def _easter_week(g: dict[str, str], today: date, tz: tzinfo) -> _Window:
    return _days(_easter(int(g["year"])) - timedelta(days=3), 7, tz)


def _year(g: dict[str, str], today: date, tz: tzinfo) -> _Window:
    return _months(int(g["year"]), 1, 12, tz)


def _ago(g: dict[str, str], today: date, tz: tzinfo) -> _Window:
    raw = g["count"]
    n = int(raw) if raw.isdigit() else _COUNTS[raw]
    unit = _UNITS[g["unit"]]
    if unit == "d":
        return _days(today - timedelta(days=n), 1, tz)
    if unit == "w":
        return _days(today - timedelta(days=today.weekday() + 7 * n), 7, tz)
    if unit == "m":
        return _months(today.year, today.month - n, 1, tz)
    return _months(today.year - n, 1, 12, tz)


def _last_weekday(g: dict[str, str], today: date, tz: tzinfo) -> _Window:
    back = (today.weekday() - _WEEKDAYS[g["weekday"]] - 1) % 7 + 1
    return _days(today - timedelta(days=back), 1, tz)


def _relative(days_back: int, count: int) -> _Rule:
    return lambda g, today, tz: _days(today - timedelta(days=days_back), count, tz)


def _part_of_day(days_back: int, first_hour: int, hours: int) -> _Rule:
    def window(g: dict[str, str], today: date, tz: tzinfo) -> _Window:
        start = _day(today - timedelta(days=days_back), tz) + timedelta(hours=first_hour)
        return start, start + timedelta(hours=hours)

    return window


def _week(weeks_back: int) -> _Rule:
    return lambda g, today, tz: _days(
        today - timedelta(days=today.weekday() + 7 * weeks_back), 7, tz
    )


def _month(months_back: int) -> _Rule:
    return lambda g, today, tz: _months(today.year, today.month - months_back, 1, tz)


def _calendar_year(years_back: int) -> _Rule:
    return lambda g, today, tz: _months(today.year - years_back, 1, 12, tz)


_LAST = r"(?:last|past|previous|letzte[nmrs]?|vorige[nmrs]?|vergangene[nmrs]?)"
_THIS = r"(?:this|diese[nmrs]?|ce|cette|este|esta)"
_OF = r"(?:,\s*|\s+of\s+|\s+de\s+|\s+)"

# Most specific first: the first rule that matches anywhere in the query wins.
_RULES: tuple[tuple[re.Pattern[str], _Rule], ...] = tuple(
    (re.compile(rf"(?<![\w-]){pattern}(?![\w-])"), rule)
    for pattern, rule in (
        (r"(?P<year>\d{4})-(?P<month_number>[01]?\d)-(?P<day>[0-3]?\d)", _dated),
        (rf"{_DAY}\s+(?:de\s+|of\s+)?{_MONTH}(?:{_OF}{_YEAR})?", _dated),
        (rf"{_MONTH}\s+{_DAY}(?:,?\s+{_YEAR})?", _dated),
        (rf"{_MONTH}{_OF}{_YEAR}", _month_of_year),
        (rf"(?:the\s+)?(?P<season>spring|summer|autumn|fall|winter){_OF}{_YEAR}", _season),
        (rf"(?:christmas|xmas|weihnachten|noel|navidad){_OF}{_YEAR}", _christmas),
        (rf"(?:easter|ostern|paques|pascua|semana santa){_OF}{_YEAR}", _easter_week),
        (rf"(?:in|im|en|au mois de|during|em)\s+{_MONTH}", _named_month),
        (rf"(?:in|im jahr|en|en el ano|during|of)\s+{_YEAR}", _year),
        (rf"{_COUNT}\s+{_UNIT}\s+ago", _ago),
        (rf"vor\s+{_COUNT}\s+{_UNIT}", _ago),
        (rf"il y a\s+{_COUNT}\s+{_UNIT}", _ago),
        (rf"hace\s+{_COUNT}\s+{_UNIT}", _ago),
        (r"(?:the\s+)?day before yesterday|vorgestern|avant-hier|anteayer", _relative(2, 1)),
        (r"this morning|heute morgen|ce matin|esta manana", _part_of_day(0, 0, 12)),
        (r"this afternoon|heute nachmittag|cet apres-midi|esta tarde", _part_of_day(0, 12, 6)),
        (r"this evening|tonight|heute abend|ce soir|esta noche", _part_of_day(0, 18, 6)),
        (r"last night|gestern abend|hier soir|anoche", _part_of_day(1, 18, 12)),
        (r"today|heute|aujourd['’]hui|hoy", _relative(0, 1)),
        (r"yesterday|gestern|ayer", _relative(1, 1)),
        (rf"{_LAST}\s+{_WEEKDAY}", _last_weekday),
        (rf"{_WEEKDAY}\s+dernier", _last_weekday),
        (rf"(?:el\s+)?{_WEEKDAY}\s+pasado", _last_weekday),
        (rf"{_LAST}\s+(?:week|woche)|(?:la\s+)?semaine derniere|(?:la\s+)?semana pasada", _week(1)),
        (rf"{_THIS}\s+(?:week|woche|semaine|semana)", _week(0)),
        (rf"{_LAST}\s+(?:month|monat)|(?:le\s+)?mois dernier|(?:el\s+)?mes pasado", _month(1)),
        (rf"{_THIS}\s+(?:month|monat|mois(?:-ci)?|mes)", _month(0)),
        (
            rf"{_LAST}\s+(?:year|jahr)|l['’]annee derniere|(?:el\s+)?ano pasado",
            _calendar_year(1),
        ),
        (rf"{_THIS}\s+(?:year|jahr|annee|ano)", _calendar_year(0)),
    )
)


def find_window(query: str, now: datetime) -> TimeWindow | None:
    """The time window the first expression of time in `query` names, read against `now` (its
    timezone: the user's day; naive means UTC); None when the query names none."""
    tz: tzinfo = now.tzinfo or timezone.utc
    folded, offsets = _fold(query)
    today = now.date()
    for pattern, rule in _RULES:
        for match in pattern.finditer(folded):
            groups = {k: v for k, v in match.groupdict().items() if v is not None}
            window = rule(groups, today, tz)
            if window is not None:
                span = (offsets[match.start()], offsets[match.end() - 1] + 1)
                return TimeWindow(start=window[0], end=window[1], span=span)
    return None
