"""PII redaction: what each kind catches, what it must leave alone, and that it never raises.

Plain synchronous tests; no database. The negatives matter as much as the positives: a redactor
that rewrites dates, versions or prices corrupts ordinary conversation data on every write.
"""

from __future__ import annotations

import copy

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from adk_memory.redaction import PiiRedactor, Redactor, redact_json

REDACTOR = PiiRedactor()


def redact(text: str) -> str:
    return REDACTOR.redact(text)


# --- each kind is redacted -------------------------------------------------------------------


@pytest.mark.parametrize(
    "address",
    [
        "john@example.com",
        "john.doe+newsletter@example.co.uk",
        "first_last%ops@mail-server.example.org",
        "UPPER.Case@Example.COM",
        "x@a.io",
    ],
)
def test_email_is_redacted(address: str) -> None:
    assert redact(f"mail {address} please") == "mail [EMAIL] please"
    assert redact(f"<{address}>, mailto:{address}.") == "<[EMAIL]>, mailto:[EMAIL]."


@pytest.mark.parametrize(
    "card",
    [
        "4111 1111 1111 1111",  # Visa test number, spaced
        "5500-0000-0000-0004",  # Mastercard test number, hyphenated
        "4111111111111111",  # compact
        "378282246310005",  # Amex, compact
        "3782 822463 10005",  # Amex, as printed (4-6-5)
        "4222222222222",  # 13-digit Visa
        "6011 0009 9013 9424",  # Discover
    ],
)
def test_card_is_redacted(card: str) -> None:
    assert redact(f"my card is {card}, thanks") == "my card is [CARD], thanks"


def test_card_followed_by_expiry_or_another_card() -> None:
    assert redact("4111 1111 1111 1111 12/25") == "[CARD] 12/25"
    assert redact("4111 1111 1111 1111 5500 0000 0000 0004") == "[CARD] [CARD]"
    assert redact("order 12 4111 1111 1111 1111") == "order 12 [CARD]"


@pytest.mark.parametrize(
    "iban",
    [
        "GB82 WEST 1234 5698 7654 32",
        "GB82WEST12345698765432",
        "DE89370400440532013000",
        "DE89 3704 0044 0532 0130 00",
        "de89 3704 0044 0532 0130 00",  # case-insensitive
        "FR14 2004 1010 0505 0001 3M02 606",
        "NL91ABNA0417164300",
        "BE68539007547034",
    ],
)
def test_iban_is_redacted(iban: str) -> None:
    assert redact(f"pay to {iban} today") == "pay to [IBAN] today"


def test_grouped_iban_does_not_swallow_a_following_word() -> None:
    assert redact("BE68 5390 0754 7034 from me") == "[IBAN] from me"


@pytest.mark.parametrize(
    "phone",
    [
        "(555) 123-4567",
        "555-123-4567",
        "555.123.4567",
        "555 123 4567",
        "1-555-123-4567",
        "020 7946 0958",
        "07700 900123",
        "+44 20 7946 0958",
        "+44 (0)20 7946 0958",
        "+1 (555) 123-4567",
        "+1-555-123-4567",
        "+33 1 23 45 67 89",
        "+49.30.1234567",
        "+861380013800",
    ],
)
def test_phone_is_redacted(phone: str) -> None:
    assert redact(f"call {phone} now") == "call [PHONE] now"
    assert redact(f"tel:{phone}") == "tel:[PHONE]"


def test_several_kinds_in_one_text() -> None:
    text = (
        "Hi, I'm jane@example.com, card 4111 1111 1111 1111, "
        "IBAN GB82 WEST 1234 5698 7654 32, phone +44 20 7946 0958."
    )
    assert redact(text) == "Hi, I'm [EMAIL], card [CARD], IBAN [IBAN], phone [PHONE]."


# --- what must be left alone -----------------------------------------------------------------


@pytest.mark.parametrize(
    "text",
    [
        # Luhn failures: long numbers that are not cards.
        "4111 1111 1111 1112",
        "5500-0000-0000-0005",
        "1234567890123456",
        "0000 0000 0000 0000",
        "12345678901234567890123",  # longer than any card
        # IBANs with wrong check digits.
        "GB00 WEST 1234 5698 7654 32",
        "DE00370400440532013000",
        "GB83WEST12345698765432",
        # Dates and times.
        "2024-01-15",
        "15/01/2024",
        "01-15-2024",
        "15.01.2024",
        "2024-01-15T10:30:00+01:00",
        "10:30",
        "10:30:45.123",
        "23:59:59",
        # Version strings and addresses.
        "1.2.3",
        "v10.15.7",
        "2.0.0-beta.1",
        "192.168.1.1",
        "10.0.19041.1234",
        # Prices and amounts.
        "$1,299.99",
        "€1.234,56",
        "USD 1 234 567.89",
        "£12.50",
        "1,234,567,890,123",
        # Order ids and plain numbers.
        "#12345",
        "order #12345 shipped",
        "42",
        "1000000",
        "room 101, floor 3",
        # Not e-mail addresses.
        "user@localhost",
        "@mention",
        "a @ b.com",
    ],
)
def test_left_alone(text: str) -> None:
    assert redact(text) == text
    assert redact(f"see {text} here") == f"see {text} here"


def test_prose_without_pii_is_the_same_object() -> None:
    text = "In 2024 we shipped v1.2.3 on 2024-01-15 at 10:30 for $1,299.99 (order #12345)."
    assert redact(text) is text


# --- options ---------------------------------------------------------------------------------

SAMPLE = "a@b.com 4111 1111 1111 1111 DE89370400440532013000 (555) 123-4567"


@pytest.mark.parametrize(
    ("option", "expected"),
    [
        ("emails", "a@b.com [CARD] [IBAN] [PHONE]"),
        ("cards", "[EMAIL] 4111 1111 1111 1111 [IBAN] [PHONE]"),
        ("ibans", "[EMAIL] [CARD] DE89370400440532013000 [PHONE]"),
        ("phones", "[EMAIL] [CARD] [IBAN] (555) 123-4567"),
    ],
)
def test_each_kind_can_be_switched_off(option: str, expected: str) -> None:
    assert PiiRedactor(**{option: False}).redact(SAMPLE) == expected


def test_all_kinds_off_changes_nothing() -> None:
    redactor = PiiRedactor(emails=False, cards=False, ibans=False, phones=False)
    assert redactor.redact(SAMPLE) is SAMPLE


def test_switched_off_cards_are_not_taken_for_phones() -> None:
    # With cards off, a card number is left whole rather than partly redacted as a phone.
    text = "card 5500 0000 0000 0004 and 4111-1111-1111-1111"
    assert PiiRedactor(cards=False).redact(text) == text


def test_custom_placeholder() -> None:
    redactor = PiiRedactor(placeholder="<redacted:{kind}>")
    assert redactor.redact("mail a@b.com") == "mail <redacted:EMAIL>"
    assert PiiRedactor(placeholder="***").redact(SAMPLE) == "*** *** *** ***"


def test_placeholder_with_digits_is_not_rescanned() -> None:
    redactor = PiiRedactor(placeholder="{kind}-4111 1111 1111 1111-a@b.com")
    assert redactor.redact("x@y.org") == "EMAIL-4111 1111 1111 1111-a@b.com"


@pytest.mark.parametrize("placeholder", ["{other}", "{0}", "{kind", "{kind.missing}"])
def test_bad_placeholder_fails_at_construction(placeholder: str) -> None:
    with pytest.raises(ValueError):
        PiiRedactor(placeholder=placeholder)


def test_options_are_keyword_only() -> None:
    with pytest.raises(TypeError):
        PiiRedactor(False)  # type: ignore[misc]


def test_pii_redactor_is_a_redactor() -> None:
    assert isinstance(REDACTOR, Redactor)


# --- redact_json -----------------------------------------------------------------------------


def test_redact_json_walks_nested_values_and_keeps_keys_and_non_strings() -> None:
    value = {
        "user a@b.com": "mail a@b.com",
        "parts": [
            {"text": "card 4111 1111 1111 1111"},
            {"args": {"phone": "(555) 123-4567", "count": 4111111111111111}},
            ["nested", ["DE89370400440532013000"]],
        ],
        "flag": True,
        "ratio": 0.5,
        "none": None,
        "empty": {},
        "list": [],
    }
    original = copy.deepcopy(value)

    result = redact_json(value, REDACTOR)

    assert result == {
        "user a@b.com": "mail [EMAIL]",
        "parts": [
            {"text": "card [CARD]"},
            {"args": {"phone": "[PHONE]", "count": 4111111111111111}},
            ["nested", ["[IBAN]"]],
        ],
        "flag": True,
        "ratio": 0.5,
        "none": None,
        "empty": {},
        "list": [],
    }
    assert value == original  # input not mutated
    assert list(result) == list(value)  # key order kept
    assert result["flag"] is True
    assert result["none"] is None


def test_redact_json_on_scalars() -> None:
    assert redact_json("a@b.com", REDACTOR) == "[EMAIL]"
    for leaf in (None, True, False, 0, 4111111111111111, 1.5):
        assert redact_json(leaf, REDACTOR) is leaf


def test_redact_json_result_is_independent_of_the_input() -> None:
    value = {"a": [{"b": "text"}]}
    result = redact_json(value, REDACTOR)
    result["a"][0]["b"] = "changed"
    result["a"].append(1)
    assert value == {"a": [{"b": "text"}]}


def test_redact_json_handles_deep_nesting() -> None:
    depth = 200
    value: object = "a@b.com"
    for level in range(depth):
        value = {"k": [value]} if level % 2 else [value]
    result = redact_json(value, REDACTOR)
    for level in reversed(range(depth)):
        result = result["k"][0] if level % 2 else result[0]
    assert result == "[EMAIL]"


def test_redact_json_accepts_any_redactor() -> None:
    class Upper:
        def redact(self, text: str) -> str:
            return text.upper()

    assert isinstance(Upper(), Redactor)
    assert redact_json({"k": ["v", 1]}, Upper()) == {"k": ["V", 1]}


# --- properties ------------------------------------------------------------------------------

ANY_TEXT = st.text(st.characters(exclude_categories=()))  # includes NUL and lone surrogates

# Text built from the pieces PII is made of, so the detectors' edge cases get exercised far more
# often than with uniformly random characters.
PII_ISH_TEXT = st.lists(
    st.sampled_from(
        [
            "0",
            "1",
            "4",
            "5",
            "9",
            "0000",
            "4111",
            "555",
            " ",
            "-",
            ".",
            ",",
            "(",
            ")",
            "+",
            "/",
            ":",
            "#",
            "@",
            "a",
            "Z",
            "GB82",
            "DE89",
            "WEST",
            "com",
            "\x00",
            "\ud800",
            "é",
        ]
    ),
    max_size=60,
).map("".join)


@settings(max_examples=300)
@given(st.one_of(ANY_TEXT, PII_ISH_TEXT))
def test_redact_never_raises(text: str) -> None:
    result = REDACTOR.redact(text)
    assert isinstance(result, str)
    assert "\x00" not in result or "\x00" in text  # the internal mask never leaks


@settings(max_examples=300)
@given(st.text(st.characters(exclude_categories=("Nd",), exclude_characters="@")))
def test_text_without_digits_or_at_sign_is_unchanged(text: str) -> None:
    assert REDACTOR.redact(text) == text


@settings(max_examples=100)
@given(
    st.recursive(
        st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | PII_ISH_TEXT,
        lambda children: st.lists(children) | st.dictionaries(PII_ISH_TEXT, children),
        max_leaves=30,
    )
)
def test_redact_json_keeps_structure(value: object) -> None:
    original = copy.deepcopy(value)
    result = redact_json(value, REDACTOR)
    assert value == original
    assert _shape(result) == _shape(value)


def _shape(value: object) -> object:
    """The value with every string replaced by a marker: what redaction must not change."""
    if isinstance(value, str):
        return str
    if isinstance(value, dict):
        return {key: _shape(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_shape(item) for item in value]
    return value
