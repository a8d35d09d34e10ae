"""The memory topics as the generation model reads them: labels and plain-words descriptions.

Owns: the descriptions of Memory Bank's four managed topics (paraphrased from its docs, so a
conversation is judged the same way here as there) and the one way topics are written into
prompts and stored on memories. It never calls a model.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from types import MappingProxyType

from ...config import CustomTopic, ManagedTopic, MemoryTopic

MANAGED_TOPIC_DESCRIPTIONS: Mapping[ManagedTopic, str] = MappingProxyType(
    {
        ManagedTopic.USER_PERSONAL_INFO: (
            "Significant personal information about the user: names, relationships, work, "
            'hobbies, important dates. For example "I work at Google" or "My wedding '
            'anniversary is on December 31".'
        ),
        ManagedTopic.USER_PREFERENCES: (
            "What the user likes or dislikes, prefers, or habitually does, stated or clearly "
            'implied: styles, choices, patterns. For example "I prefer the middle seat".'
        ),
        ManagedTopic.KEY_CONVERSATION_DETAILS: (
            "Important milestones, decisions and outcomes of the conversation or its task. For "
            'example "I booked round-trip plane tickets between JFK and SFO, leaving on June 1, '
            '2025 and returning on June 7, 2025".'
        ),
        ManagedTopic.EXPLICIT_INSTRUCTIONS: (
            "Anything the user explicitly asks the agent to remember or to forget. For example, "
            '"Remember that I primarily use Python" gives the fact "The user primarily uses '
            'Python".'
        ),
    }
)
"""What each managed topic covers, as shown to the extraction model."""


def topic_label(topic: MemoryTopic) -> str:
    """The label a topic is stored under on a memory and named by in prompts."""
    if isinstance(topic, ManagedTopic):
        return topic.value
    return topic.label


def topic_description(topic: MemoryTopic) -> str:
    """What belongs under a topic, on one line (prompts stay easy to scan)."""
    if isinstance(topic, CustomTopic):
        return " ".join(topic.description.split())
    return MANAGED_TOPIC_DESCRIPTIONS[topic]


def unique_topics(topics: Sequence[MemoryTopic]) -> list[MemoryTopic]:
    """The topics with repeated labels removed (the first wins), so a label means one thing."""
    seen: set[str] = set()
    kept: list[MemoryTopic] = []
    for topic in topics:
        label = topic_label(topic)
        if label not in seen:
            seen.add(label)
            kept.append(topic)
    return kept


def render_topics(topics: Sequence[MemoryTopic]) -> str:
    """The topics as a prompt list: one `- LABEL: description` line each."""
    return "\n".join(f"- {topic_label(t)}: {topic_description(t)}" for t in unique_topics(topics))
