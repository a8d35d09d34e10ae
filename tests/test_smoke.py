from google.adk.events.event import Event
from google.adk.events.event_actions import EventActions


async def test_roundtrip(session_service):
    s = await session_service.create_session(
        app_name="a", user_id="u", state={"x": 1, "app:y": 2, "user:z": 3, "temp:t": 4}
    )
    assert s.state == {"x": 1, "app:y": 2, "user:z": 3}
    e = Event(
        author="user", invocation_id="i", actions=EventActions(state_delta={"k": None, "user:z": 5})
    )
    await session_service.append_event(s, e)
    got = await session_service.get_session(app_name="a", user_id="u", session_id=s.id)
    assert got.events == [e]
    assert got.state == {"x": 1, "k": None, "app:y": 2, "user:z": 5}
    assert got.last_update_time == e.timestamp
