"""An ADK Runner on PostgresSessionService: a multi-turn conversation with a tool call, then a
second Runner (as another replica would) reloads the session and carries on."""

from __future__ import annotations

from google.adk.agents.llm_agent import LlmAgent
from google.adk.runners import Runner
from google.genai import types

from adk_memory.testing import ScriptedLlm, function_call

APP = "weather_app"


def get_weather(city: str) -> dict:
    """Returns the weather for a city."""
    return {"city": city, "forecast": "sunny"}


def make_runner(llm: ScriptedLlm, session_service) -> Runner:
    agent = LlmAgent(
        name="assistant",
        model=llm,
        instruction="Answer briefly.",
        tools=[get_weather],
        output_key="last_answer",
    )
    return Runner(app_name=APP, agent=agent, session_service=session_service)


async def ask(runner: Runner, session_id: str, text: str) -> list:
    message = types.Content(role="user", parts=[types.Part(text=text)])
    return [
        event
        async for event in runner.run_async(
            user_id="u1", session_id=session_id, new_message=message
        )
    ]


def texts(contents: list[types.Content]) -> list[str]:
    return [p.text for c in contents for p in (c.parts or []) if p.text]


async def test_conversation_survives_a_new_runner_and_service_instance(make_session_service):
    first_service = make_session_service()
    llm = ScriptedLlm(
        [function_call("get_weather", city="Paris"), "It is sunny in Paris.", "You asked Paris."]
    )
    runner = make_runner(llm, first_service)
    session = await first_service.create_session(app_name=APP, user_id="u1")

    await ask(runner, session.id, "Weather in Paris?")
    await ask(runner, session.id, "Which city did I ask about?")

    stored = await first_service.get_session(app_name=APP, user_id="u1", session_id=session.id)
    assert stored.state["last_answer"] == "You asked Paris."
    calls = [e for e in stored.events if e.get_function_calls()]
    responses = [e for e in stored.events if e.get_function_responses()]
    assert calls[0].get_function_calls()[0].args == {"city": "Paris"}
    assert responses[0].get_function_responses()[0].response == {
        "city": "Paris",
        "forecast": "sunny",
    }
    # The second turn's model call saw the whole first turn, tool round trip included.
    assert "Weather in Paris?" in texts(llm.requests[2].contents)
    assert "It is sunny in Paris." in texts(llm.requests[2].contents)

    # Another replica: new service object, new runner, same database.
    second_llm = ScriptedLlm(["Still Paris."])
    second_runner = make_runner(second_llm, make_session_service())
    await ask(second_runner, session.id, "And now?")
    seen = texts(second_llm.requests[0].contents)
    assert seen[:2] == ["Weather in Paris?", "It is sunny in Paris."]
    assert seen[-1] == "And now?"

    final = await first_service.get_session(app_name=APP, user_id="u1", session_id=session.id)
    assert len(final.events) == len(stored.events) + 2
    assert final.state["last_answer"] == "Still Paris."
