"""Embedders: GeminiEmbedder up to the network call (a real google-genai client whose
`embed_content` is replaced), LocalEmbedder against a stand-in sentence_transformers module.

No network and no model downloads, except the opt-in real-API test
(ADK_MEMORY_REAL_API=1 and GOOGLE_API_KEY or GEMINI_API_KEY).
"""

from __future__ import annotations

import asyncio
import json
import math
import os
import sys
import types as pytypes
from collections.abc import Callable
from typing import Any, ClassVar

import httpx
import pytest
from google import genai
from google.genai import errors, types

from adk_memory.memory import embeddings
from adk_memory.memory.embeddings import Embedder, GeminiEmbedder, LocalEmbedder
from adk_memory.testing import HashEmbedder

CREDENTIAL_VARIABLES = (
    "GOOGLE_API_KEY",
    "GEMINI_API_KEY",
    "GOOGLE_GENAI_USE_VERTEXAI",
    "GOOGLE_GENAI_USE_ENTERPRISE",
    "GOOGLE_CLOUD_PROJECT",
    "GOOGLE_CLOUD_LOCATION",
    "GOOGLE_APPLICATION_CREDENTIALS",
)


def norm(vector: list[float]) -> float:
    return math.sqrt(sum(v * v for v in vector))


def api_error(code: int, status: str = "UNAVAILABLE", **error: Any) -> errors.APIError:
    return errors.APIError(code, {"error": {"code": code, "status": status, **error}})


class Recorder:
    """Stands in for `client.aio.models.embed_content`: records each call, then raises the next
    scripted failure or answers with `values(text, position in batch)` per text."""

    def __init__(
        self,
        dimensions: int,
        *,
        failures: list[BaseException] | None = None,
        values: Callable[[str, int], list[float]] | None = None,
    ) -> None:
        self.dimensions = dimensions
        self.failures = list(failures or [])
        self.values = values or (lambda _text, i: [float(i + 1)] + [0.0] * (dimensions - 1))
        self.calls: list[dict[str, Any]] = []

    async def __call__(
        self, *, model: str, contents: list[str], config: types.EmbedContentConfig
    ) -> types.EmbedContentResponse:
        self.calls.append({"model": model, "contents": list(contents), "config": config})
        if self.failures:
            raise self.failures.pop(0)
        return types.EmbedContentResponse(
            embeddings=[
                types.ContentEmbedding(values=self.values(text, i))
                for i, text in enumerate(contents)
            ]
        )


@pytest.fixture
def no_sleep(monkeypatch: pytest.MonkeyPatch) -> list[float]:
    """Backoff waits are recorded, not slept."""
    delays: list[float] = []

    async def sleep(delay: float) -> None:
        delays.append(delay)

    monkeypatch.setattr(embeddings, "_sleep", sleep)
    return delays


def gemini(
    monkeypatch: pytest.MonkeyPatch, recorder: Recorder, client: genai.Client | None = None, **kw
) -> GeminiEmbedder:
    client = client or genai.Client(api_key="test-key")
    monkeypatch.setattr(client.aio.models, "embed_content", recorder)
    return GeminiEmbedder(client=client, dimensions=recorder.dimensions, **kw)


# ----------------------------------------------------------------------------------- Gemini


async def test_batches_of_batch_size(monkeypatch: pytest.MonkeyPatch) -> None:
    recorder = Recorder(8)
    embedder = gemini(monkeypatch, recorder)
    texts = [f"fact {i}" for i in range(250)]

    vectors = await embedder.embed(texts)

    assert [len(call["contents"]) for call in recorder.calls] == [100, 100, 50]
    assert [text for call in recorder.calls for text in call["contents"]] == texts
    assert len(vectors) == 250
    assert all(len(v) == 8 for v in vectors)
    assert all(call["model"] == "gemini-embedding-001" for call in recorder.calls)


async def test_vectors_come_back_in_input_order(monkeypatch: pytest.MonkeyPatch) -> None:
    def values(text: str, _i: int) -> list[float]:
        n = int(text.split()[1])
        return [math.cos(n / 100), math.sin(n / 100), 0.0, 0.0]

    embedder = gemini(monkeypatch, Recorder(4, values=values), batch_size=7)
    texts = [f"fact {i}" for i in range(30)]

    vectors = await embedder.embed(texts)

    assert vectors == [pytest.approx(values(t, 0)) for t in texts]


@pytest.mark.parametrize(
    ("task", "task_type"), [("document", "RETRIEVAL_DOCUMENT"), ("query", "RETRIEVAL_QUERY")]
)
async def test_task_type_and_output_dimensionality(
    monkeypatch: pytest.MonkeyPatch, task: str, task_type: str
) -> None:
    recorder = Recorder(16)
    embedder = gemini(monkeypatch, recorder)

    await embedder.embed(["a", "b"], task=task)  # type: ignore[arg-type]

    (call,) = recorder.calls
    assert isinstance(call["config"], types.EmbedContentConfig)
    assert call["config"].task_type == task_type
    assert call["config"].output_dimensionality == 16
    assert call["contents"] == ["a", "b"]


async def test_default_task_is_document(monkeypatch: pytest.MonkeyPatch) -> None:
    recorder = Recorder(4)
    await gemini(monkeypatch, recorder).embed(["a"])
    assert recorder.calls[0]["config"].task_type == "RETRIEVAL_DOCUMENT"


async def test_unknown_task_is_rejected(monkeypatch: pytest.MonkeyPatch) -> None:
    recorder = Recorder(4)
    with pytest.raises(ValueError, match="task"):
        await gemini(monkeypatch, recorder).embed(["a"], task="classify")  # type: ignore[arg-type]
    assert recorder.calls == []


async def test_truncated_vectors_are_normalised(monkeypatch: pytest.MonkeyPatch) -> None:
    embedder = gemini(monkeypatch, Recorder(4, values=lambda _t, _i: [3.0, 4.0, 0.0, 0.0]))

    (vector,) = await embedder.embed(["x"])

    assert vector == pytest.approx([0.6, 0.8, 0.0, 0.0])
    assert norm(vector) == pytest.approx(1.0)


async def test_full_size_vectors_are_returned_as_is(monkeypatch: pytest.MonkeyPatch) -> None:
    raw = [0.5] + [0.0] * 3071
    embedder = gemini(monkeypatch, Recorder(3072, values=lambda _t, _i: raw))

    (vector,) = await embedder.embed(["x"])

    assert vector == raw


async def test_zero_vector_is_not_turned_into_nan(monkeypatch: pytest.MonkeyPatch) -> None:
    embedder = gemini(monkeypatch, Recorder(4, values=lambda _t, _i: [0.0] * 4))
    assert await embedder.embed(["x"]) == [[0.0] * 4]


async def test_retries_a_503_then_succeeds(
    monkeypatch: pytest.MonkeyPatch, no_sleep: list[float]
) -> None:
    recorder = Recorder(4, failures=[api_error(503)])
    embedder = gemini(monkeypatch, recorder)

    vectors = await embedder.embed(["a", "b"])

    assert len(vectors) == 2
    assert len(recorder.calls) == 2
    assert recorder.calls[0]["contents"] == recorder.calls[1]["contents"] == ["a", "b"]
    assert len(no_sleep) == 1
    assert 0 < no_sleep[0] <= 1.0


@pytest.mark.parametrize(
    "failure",
    [
        api_error(429, "RESOURCE_EXHAUSTED"),
        api_error(500, "INTERNAL"),
        api_error(504, "DEADLINE_EXCEEDED"),
        TimeoutError(),
        httpx.ReadTimeout("read timed out"),
    ],
    ids=["429", "500", "504", "TimeoutError", "httpx.ReadTimeout"],
)
async def test_transient_errors_are_retried(
    monkeypatch: pytest.MonkeyPatch, no_sleep: list[float], failure: BaseException
) -> None:
    recorder = Recorder(4, failures=[failure])
    assert len(await gemini(monkeypatch, recorder).embed(["a"])) == 1
    assert len(recorder.calls) == 2


async def test_gives_up_after_max_retries_and_reraises(
    monkeypatch: pytest.MonkeyPatch, no_sleep: list[float]
) -> None:
    failures = [api_error(503) for _ in range(10)]
    recorder = Recorder(4, failures=failures)
    embedder = gemini(monkeypatch, recorder, max_retries=2)

    with pytest.raises(errors.APIError) as raised:
        await embedder.embed(["a"])

    assert raised.value.code == 503
    assert len(recorder.calls) == 3  # the first attempt and two retries
    assert len(no_sleep) == 2
    assert no_sleep[0] <= 1.0 < no_sleep[1] <= 2.0  # exponential: steps of 1s, then 2s


async def test_permanent_errors_are_not_retried(
    monkeypatch: pytest.MonkeyPatch, no_sleep: list[float]
) -> None:
    recorder = Recorder(4, failures=[api_error(400, "INVALID_ARGUMENT")])

    with pytest.raises(errors.APIError):
        await gemini(monkeypatch, recorder).embed(["a"])

    assert len(recorder.calls) == 1
    assert no_sleep == []


async def test_max_retries_zero_never_retries(
    monkeypatch: pytest.MonkeyPatch, no_sleep: list[float]
) -> None:
    recorder = Recorder(4, failures=[api_error(503)])
    with pytest.raises(errors.APIError):
        await gemini(monkeypatch, recorder, max_retries=0).embed(["a"])
    assert len(recorder.calls) == 1


async def test_waits_as_long_as_a_429_asks(
    monkeypatch: pytest.MonkeyPatch, no_sleep: list[float]
) -> None:
    retry_info = {"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": "17s"}
    failure = api_error(429, "RESOURCE_EXHAUSTED", details=[retry_info])
    recorder = Recorder(4, failures=[failure])

    await gemini(monkeypatch, recorder).embed(["a"])

    assert no_sleep == [17.0]


async def test_one_failed_batch_fails_the_call_and_stops_the_others(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    client = genai.Client(api_key="test-key")
    cancelled: list[str] = []

    async def embed_content(*, contents: list[str], **_: Any) -> types.EmbedContentResponse:
        if contents == ["bad"]:
            raise api_error(400, "INVALID_ARGUMENT")
        try:
            await asyncio.Event().wait()  # a request that would never answer
        except asyncio.CancelledError:
            cancelled.extend(contents)
            raise
        raise AssertionError("unreachable")

    monkeypatch.setattr(client.aio.models, "embed_content", embed_content)
    embedder = GeminiEmbedder(client=client, dimensions=4, batch_size=1)

    with pytest.raises(errors.APIError):
        await asyncio.wait_for(embedder.embed(["a", "b", "bad"]), timeout=5)

    assert sorted(cancelled) == ["a", "b"]


async def test_through_google_genai_to_the_wire(
    monkeypatch: pytest.MonkeyPatch, no_sleep: list[float]
) -> None:
    """The real google-genai request path, with HTTP answered locally: what is sent, and that a
    503 surfaces as the APIError the retry expects (google-genai itself does not retry)."""
    requests: list[dict[str, Any]] = []

    def answer(request: httpx.Request) -> httpx.Response:
        body = json.loads(request.content)
        requests.append({"url": str(request.url), "body": body})
        if len(requests) == 1:
            error = {"code": 503, "message": "overloaded", "status": "UNAVAILABLE"}
            return httpx.Response(503, json={"error": error})
        return httpx.Response(200, json={"embeddings": [{"values": [3.0, 4.0]}] * 2})

    transport = httpx.AsyncClient(transport=httpx.MockTransport(answer))
    client = genai.Client(
        api_key="test-key", http_options=types.HttpOptions(httpx_async_client=transport)
    )
    embedder = GeminiEmbedder(client=client, dimensions=2)

    vectors = await embedder.embed(["a", "b"], task="query")

    assert vectors == [pytest.approx([0.6, 0.8])] * 2
    assert len(requests) == 2
    assert requests[1]["url"].endswith("/models/gemini-embedding-001:batchEmbedContents")
    sent = requests[1]["body"]["requests"]
    assert [r["content"]["parts"][0]["text"] for r in sent] == ["a", "b"]
    assert {r["taskType"] for r in sent} == {"RETRIEVAL_QUERY"}
    assert {r["outputDimensionality"] for r in sent} == {2}
    await transport.aclose()


async def test_wrong_dimension_is_a_clear_error(monkeypatch: pytest.MonkeyPatch) -> None:
    recorder = Recorder(4, values=lambda _t, _i: [1.0, 0.0, 0.0])
    with pytest.raises(ValueError, match="3 values, expected 4"):
        await gemini(monkeypatch, recorder).embed(["a"])


async def test_missing_embeddings_are_a_clear_error(monkeypatch: pytest.MonkeyPatch) -> None:
    client = genai.Client(api_key="test-key")

    async def short(**_: Any) -> types.EmbedContentResponse:
        return types.EmbedContentResponse(embeddings=[types.ContentEmbedding(values=[1.0])])

    monkeypatch.setattr(client.aio.models, "embed_content", short)
    embedder = GeminiEmbedder(client=client, dimensions=1)

    with pytest.raises(ValueError, match="1 embeddings for 2 texts"):
        await embedder.embed(["a", "b"])


async def test_nothing_to_embed_makes_no_request(monkeypatch: pytest.MonkeyPatch) -> None:
    recorder = Recorder(4)
    assert await gemini(monkeypatch, recorder).embed([]) == []
    assert recorder.calls == []


async def test_a_bare_string_is_rejected(monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(TypeError, match="sequence of texts"):
        await gemini(monkeypatch, Recorder(4)).embed("hello")


async def test_vertex_gemini_models_get_one_text_per_request(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    client = genai.Client(vertexai=True, project="test-project", location="us-central1")
    recorder = Recorder(4)
    embedder = gemini(monkeypatch, recorder, client=client)

    vectors = await embedder.embed(["a", "b", "c"])

    assert len(vectors) == 3
    assert sorted(call["contents"] for call in recorder.calls) == [["a"], ["b"], ["c"]]


async def test_vertex_text_embedding_models_are_batched(monkeypatch: pytest.MonkeyPatch) -> None:
    client = genai.Client(vertexai=True, project="test-project", location="us-central1")
    recorder = Recorder(4)
    monkeypatch.setattr(client.aio.models, "embed_content", recorder)
    embedder = GeminiEmbedder("text-embedding-005", client=client, dimensions=4)

    await embedder.embed(["a", "b", "c"])

    assert [call["contents"] for call in recorder.calls] == [["a", "b", "c"]]


async def test_client_is_created_lazily(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in CREDENTIAL_VARIABLES:
        monkeypatch.delenv(name, raising=False)

    embedder = GeminiEmbedder()  # no credentials anywhere: constructing must not fail
    assert embedder._client is None
    assert embedder.dimensions == 768

    # The first embed creates the client, and google-genai reports the missing key then.
    with pytest.raises(ValueError, match="API key"):
        await embedder.embed(["a"])


async def test_lazy_client_uses_google_genai_resolution(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in CREDENTIAL_VARIABLES:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("GEMINI_API_KEY", "env-key")

    from_env = GeminiEmbedder()
    assert from_env.client is from_env.client  # created once
    assert not from_env.client.vertexai

    vertex = GeminiEmbedder(vertexai=True, project="test-project", location="us-central1")
    assert vertex.client.vertexai


def test_client_and_connection_settings_are_exclusive() -> None:
    with pytest.raises(ValueError, match="api_key"):
        GeminiEmbedder(client=genai.Client(api_key="test-key"), api_key="other")


@pytest.mark.parametrize(
    "options", [{"dimensions": 0}, {"batch_size": 0}, {"max_retries": -1}], ids=str
)
def test_invalid_options(options: dict[str, int]) -> None:
    with pytest.raises(ValueError):
        GeminiEmbedder(**options)  # type: ignore[arg-type]


def test_embedders_satisfy_the_protocol() -> None:
    assert isinstance(HashEmbedder(), Embedder)
    assert isinstance(GeminiEmbedder(), Embedder)
    assert isinstance(GeminiEmbedder(client=genai.Client(api_key="test-key")), Embedder)


@pytest.mark.skipif(
    os.environ.get("ADK_MEMORY_REAL_API") != "1"
    or not (os.environ.get("GOOGLE_API_KEY") or os.environ.get("GEMINI_API_KEY")),
    reason="set ADK_MEMORY_REAL_API=1 and GOOGLE_API_KEY or GEMINI_API_KEY to call the API",
)
async def test_real_gemini_api() -> None:
    embedder = GeminiEmbedder(dimensions=768)

    documents = await embedder.embed(["The user's dog is called Rex.", "Paris is in France."])
    (query,) = await embedder.embed(["What is my dog's name?"], task="query")

    assert [len(v) for v in documents] == [768, 768]
    assert len(query) == 768
    assert all(norm(v) == pytest.approx(1.0, abs=1e-6) for v in [*documents, query])


# ----------------------------------------------------------------------------------- Local


class FakeSentenceTransformer:
    """Just enough of sentence_transformers.SentenceTransformer, recording what it is asked."""

    instances: ClassVar[list[FakeSentenceTransformer]] = []

    def __init__(self, model_name_or_path: str, device: str | None = None) -> None:
        self.name = model_name_or_path
        self.device = device
        self.encoded: list[tuple[list[str], dict[str, Any]]] = []
        FakeSentenceTransformer.instances.append(self)

    def get_sentence_embedding_dimension(self) -> int:
        return 3

    def encode(self, sentences: list[str], **options: Any) -> list[list[float]]:
        self.encoded.append((list(sentences), options))
        return [[float(len(s)), 0.0, 0.0] for s in sentences]


@pytest.fixture
def fake_sentence_transformers(monkeypatch: pytest.MonkeyPatch) -> type[FakeSentenceTransformer]:
    module = pytypes.ModuleType("sentence_transformers")
    module.SentenceTransformer = FakeSentenceTransformer  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "sentence_transformers", module)
    FakeSentenceTransformer.instances = []
    return FakeSentenceTransformer


async def test_local_embedder_without_sentence_transformers(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # None in sys.modules makes `import sentence_transformers` fail even where it is installed.
    monkeypatch.setitem(sys.modules, "sentence_transformers", None)
    embedder = LocalEmbedder()  # constructing imports nothing

    with pytest.raises(ImportError, match=r'pip install "adk-memory\[local\]"'):
        await embedder.embed(["a"])
    with pytest.raises(ImportError, match="sentence-transformers"):
        _ = embedder.dimensions


def test_local_embedder_really_missing() -> None:
    """In this environment sentence-transformers is not installed (torch must not be)."""
    try:
        import sentence_transformers  # noqa: F401
    except ImportError:
        pass
    else:
        pytest.skip("sentence-transformers is installed")
    with pytest.raises(ImportError, match=r'pip install "adk-memory\[local\]"'):
        _ = LocalEmbedder().dimensions


async def test_local_embedder_loads_once_and_encodes_in_a_thread(
    fake_sentence_transformers: type[FakeSentenceTransformer],
) -> None:
    embedder = LocalEmbedder(device="cpu", batch_size=8)
    assert fake_sentence_transformers.instances == []  # lazy

    assert embedder.dimensions == 3
    vectors = await embedder.embed(["ab", "abcd"], task="query")
    await embedder.embed(["x"])

    (model,) = fake_sentence_transformers.instances
    assert model.name == "sentence-transformers/all-MiniLM-L6-v2"
    assert model.device == "cpu"
    assert vectors == [[2.0, 0.0, 0.0], [4.0, 0.0, 0.0]]
    sentences, options = model.encoded[0]
    assert sentences == ["ab", "abcd"]  # no prefixes for a non-E5 model
    assert options["normalize_embeddings"] is True
    assert options["batch_size"] == 8


async def test_local_embedder_prefixes_e5_inputs(
    fake_sentence_transformers: type[FakeSentenceTransformer],
) -> None:
    embedder = LocalEmbedder("intfloat/multilingual-e5-small")
    await embedder.load()

    await embedder.embed(["where is my dog"], task="query")
    await embedder.embed(["the dog is at home"], task="document")

    (model,) = fake_sentence_transformers.instances
    assert [sentences for sentences, _ in model.encoded] == [
        ["query: where is my dog"],
        ["passage: the dog is at home"],
    ]


@pytest.mark.parametrize(
    ("name", "is_e5"),
    [
        ("intfloat/e5-base-v2", True),
        ("E5-large", True),
        ("/models/multilingual-e5-small", True),
        ("sentence-transformers/all-MiniLM-L6-v2", False),
        ("BAAI/bge-small-en-v1.5", False),
        ("thenlper/gte-base5", False),
    ],
)
def test_e5_detection(name: str, is_e5: bool) -> None:
    assert (LocalEmbedder(name)._prefixes is not None) is is_e5


async def test_local_embedder_satisfies_the_protocol(
    fake_sentence_transformers: type[FakeSentenceTransformer],
) -> None:
    assert isinstance(LocalEmbedder(), Embedder)


async def test_local_embedder_empty_input_loads_nothing(
    fake_sentence_transformers: type[FakeSentenceTransformer],
) -> None:
    assert await LocalEmbedder().embed([]) == []
    assert fake_sentence_transformers.instances == []
