"""DelegationFilterPlugin and filter_delegation: a root agent hands the conversation to sub-agents
with `transfer_to_agent`; each sub-agent sees the user, the root agent and its own tool work,
but not another sub-agent's tool calls, results or chatter. The root agent sees everything, and
the stored session keeps every event."""

from __future__ import annotations

from google.adk.agents.llm_agent import LlmAgent
from google.genai import types
from test_compaction_window import APP, USER, make_runner, model, relay, user

from adk_memory.adk.compaction.delegation import (
    DelegationFilterPlugin,
    delegation_chain,
    filter_delegation,
)
from adk_memory.testing import ScriptedLlm, function_call


def find_flights(city: str) -> dict:
    """Flights to a city."""
    return {"flights": [f"AF-{city}-123"]}


def find_hotels(city: str) -> dict:
    """Hotels in a city."""
    return {"hotels": [f"Grand {city}"]}


def transfer(agent_name: str) -> types.Part:
    return function_call("transfer_to_agent", agent_name=agent_name)


def sent_text(contents: list[types.Content]) -> str:
    """Everything the model was sent, as one string (texts, calls and results)."""
    return "\n".join(
        part.text or str(part.function_call or "") + str(part.function_response or "")
        for content in contents
        for part in content.parts or ()
    )


async def travel_desk(session_service, plugins):
    """The user books flights with `flights`, hotels with `hotels`, then goes back to `flights`
    by way of the root agent. Returns each agent's model, the events the runner produced and
    the events stored."""
    root_llm = ScriptedLlm([transfer("flights"), "Anything else?", transfer("flights")])
    flights_llm = ScriptedLlm(
        [
            function_call("find_flights", city="Lisbon"),
            "Flight AF-Lisbon-123 is booked.",
            transfer("hotels"),
            "Your flight is still AF-Lisbon-123.",
        ]
    )
    hotels_llm = ScriptedLlm(
        [
            function_call("find_hotels", city="Lisbon"),
            "Hotel Grand Lisbon is booked.",
            transfer("root"),
        ]
    )
    flights = LlmAgent(name="flights", model=flights_llm, tools=[find_flights])
    hotels = LlmAgent(name="hotels", model=hotels_llm, tools=[find_hotels])
    root = LlmAgent(name="root", model=root_llm, sub_agents=[flights, hotels])
    runner = make_runner(session_service, root, *plugins)
    session = await session_service.create_session(app_name=APP, user_id=USER)
    produced = []
    for text in ["Book a flight to Lisbon.", "And a hotel.", "Thanks, that's all.", "Flight?"]:
        message = user(text)
        async for event in runner.run_async(
            user_id=USER, session_id=session.id, new_message=message
        ):
            produced.append(event)
    stored = await session_service.get_session(app_name=APP, user_id=USER, session_id=session.id)
    return root_llm, flights_llm, hotels_llm, produced, stored.events


async def test_sub_agents_see_only_their_own_delegation(session_service):
    root_llm, flights_llm, hotels_llm, produced, stored = await travel_desk(
        session_service, [DelegationFilterPlugin()]
    )

    assert [e.id for e in stored if e.author != "user"] == [e.id for e in produced]
    assert len(produced) == 16
    flights_view = sent_text(flights_llm.requests[-1].contents)
    assert "find_flights" in flights_view and "AF-Lisbon-123" in flights_view
    assert "Anything else?" in flights_view
    for user_text in ["Book a flight to Lisbon.", "And a hotel.", "Thanks, that's all."]:
        assert user_text in flights_view
    assert "find_hotels" not in flights_view and "Grand Lisbon" not in flights_view
    assert "[hotels]" not in flights_view

    hotels_view = "\n".join(sent_text(r.contents) for r in hotels_llm.requests)
    assert "find_hotels" in hotels_view
    assert "find_flights" not in hotels_view and "AF-Lisbon-123" not in hotels_view

    root_view = sent_text(root_llm.requests[-1].contents)
    for everything in ["find_flights", "AF-Lisbon-123", "find_hotels", "Grand Lisbon"]:
        assert everything in root_view


async def test_without_the_plugin_sub_agents_see_each_others_tools(session_service):
    _, flights_llm, _, _, _ = await travel_desk(session_service, [])

    flights_view = sent_text(flights_llm.requests[-1].contents)
    assert "find_hotels" in flights_view and "Grand Lisbon" in flights_view


async def test_other_agents_replies_can_be_kept_without_their_tools(session_service):
    _, flights_llm, _, _, _ = await travel_desk(
        session_service, [DelegationFilterPlugin(keep_other_agents_replies=True)]
    )

    flights_view = sent_text(flights_llm.requests[-1].contents)
    assert "Hotel Grand Lisbon is booked." in flights_view
    assert "find_hotels" not in flights_view


def test_filter_drops_unrelated_agents_and_can_keep_their_words():
    image = types.Part(inline_data=types.Blob(mime_type="image/png", data=b"\x89PNG"))
    mixed = relay("[b] said:\nlooking", "[b] called tool `search` with parameters:\n{}")
    said = types.Part(text="[b] said:\nsee")
    with_image = types.Content(role="user", parts=[relay().parts[0], said, image])
    contents = [
        user("hi"),
        relay("[root] called tool `lookup` with parameters:\n{}"),
        relay("[b] `search` tool returned result:\n{}"),
        mixed,
        with_image,
        relay("[b] called tool `transfer_to_agent` with parameters:\n{'agent_name': 'a'}"),
        relay("unattributed text"),
        model("mine"),
    ]

    assert filter_delegation(contents, ["a", "root"]) == [
        contents[0],
        contents[1],
        contents[6],
        contents[7],
    ]
    with_replies = filter_delegation(contents, ["a", "root"], keep_other_agents_replies=True)
    assert with_replies == [
        contents[0],
        contents[1],
        relay("[b] said:\nlooking"),
        with_image,
        contents[6],
        contents[7],
    ]
    assert with_replies[3] is with_image


def test_the_delegation_chain_runs_up_to_the_root():
    leaf = LlmAgent(name="leaf", model=ScriptedLlm())
    middle = LlmAgent(name="middle", model=ScriptedLlm(), sub_agents=[leaf])
    LlmAgent(name="root", model=ScriptedLlm(), sub_agents=[middle])

    assert delegation_chain(leaf) == ["leaf", "middle", "root"]
