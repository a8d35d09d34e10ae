"""Quickstart: an ADK agent whose sessions and memories live in PostgreSQL, with no database to
install.

`configure()` with no URL uses the embedded PostgreSQL in `./.adk/pgdata` (started on first use,
stopped when the last process using it exits). The model is `ScriptedLlm`, so this runs with no
API key; swap in `model="gemini-2.5-flash"` for a real one (and drop `triggers=None` to let it
generate memories). Run it twice: the second run finds the first run's conversation still there.
The model is shown what the user's memory holds.
"""

from __future__ import annotations

import asyncio

from google.adk.agents.llm_agent import LlmAgent
from google.genai import types

from adk_memory import configure
from adk_memory.testing import ScriptedLlm, function_call

APP, USER, SESSION = "quickstart", "demo-user", "demo-session"


def get_weather(city: str) -> dict:
    """Returns today's forecast for a city."""
    return {"city": city, "forecast": "sunny, 21°C"}


def describe(part: types.Part) -> str:
    """One readable line for a text, a tool call or a tool result."""
    if part.function_call:
        return f"calls {part.function_call.name}({part.function_call.args})"
    if part.function_response:
        return f"{part.function_response.name} returned {part.function_response.response}"
    return part.text or ""


async def main() -> None:
    stack = configure(triggers=None)  # no model key here: no memory generation
    sessions = stack.session_service
    model = ScriptedLlm(
        responder=lambda request: (
            function_call("get_weather", city="Paris")
            if not request.contents[-1].parts[0].function_response
            else "It is sunny and 21°C in Paris."
        )
    )
    agent = LlmAgent(name="assistant", model=model, tools=[get_weather], instruction="Be brief.")
    runner = stack.runner(agent, app_name=APP)

    session = await sessions.get_session(app_name=APP, user_id=USER, session_id=SESSION)
    if session is None:
        session = await sessions.create_session(app_name=APP, user_id=USER, session_id=SESSION)
        scope = {"app_name": APP, "user_id": USER}
        await stack.memory_service.create_memory("Lives in Paris", scope)
    print(f"session {session.id}: {len(session.events)} events stored before this run")

    message = types.Content(role="user", parts=[types.Part(text="What's the weather in Paris?")])
    async for event in runner.run_async(user_id=USER, session_id=SESSION, new_message=message):
        for part in event.content.parts if event.content else []:
            print(f"  {event.author}: {describe(part)}")

    stored = await sessions.get_session(app_name=APP, user_id=USER, session_id=SESSION)
    print(f"session {stored.id}: {len(stored.events)} events stored in PostgreSQL")
    print("the model was told:", model.requests[0].config.system_instruction.splitlines()[-2])
    await runner.close()
    await stack.close()


if __name__ == "__main__":
    asyncio.run(main())
