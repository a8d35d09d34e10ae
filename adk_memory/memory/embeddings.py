"""Embedders: the one protocol the memory service needs, and its implementations.

Owns: turning texts into vectors, in batches, for documents (stored facts) and queries. It never
touches the database; the store fixes the dimension per schema and rejects a mismatch.

`GeminiEmbedder` calls Google's embedding models through google-genai (Gemini API or Vertex AI);
`LocalEmbedder` runs a sentence-transformers model in-process (the optional `local` extra).
"""

from __future__ import annotations

import asyncio
import math
import re
import threading
from collections.abc import Sequence
from typing import Any, Literal, Protocol, runtime_checkable

from google import genai
from google.genai import types

from .._retry import Backoff, RetryPolicy, retry_call
from ..errors import GenerationOutputError, InputTypeError, InputValidationError

EmbeddingTask = Literal["document", "query"]


@runtime_checkable
class Embedder(Protocol):
    """Makes vectors of a fixed size. Implementations batch: one call per `embed`.

    An embedder may also have a `similarity_floor` (float): the cosine similarity below which
    its vectors of a query and a memory are unrelated, calibrated for its model. Retrieval uses
    it when `RetrievalConfig.min_similarity` is not set."""

    dimensions: int

    async def embed(
        self, texts: Sequence[str], *, task: EmbeddingTask = "document"
    ) -> list[list[float]]:
        """One vector of `dimensions` floats per text, in order."""
        ...


def _check_texts(texts: Sequence[str]) -> list[str]:
    # A bare string is a Sequence[str] too; embedding it character by character is never meant.
    if isinstance(texts, str):
        raise InputTypeError("embed() takes a sequence of texts, not a single string.")
    return list(texts)


def _l2_normalise(vector: list[float]) -> list[float]:
    norm = math.sqrt(math.fsum(v * v for v in vector))
    if norm == 0.0:
        return vector  # Nothing to scale; a zero vector stays zero rather than becoming NaN.
    return [v / norm for v in vector]


# ----------------------------------------------------------------------------------- Gemini

_GEMINI_TASK_TYPES: dict[str, str] = {
    "document": "RETRIEVAL_DOCUMENT",
    "query": "RETRIEVAL_QUERY",
}

_GEMINI_FULL_DIMENSIONS = 3072
"""gemini-embedding-001's native size: only full-size vectors come back normalised."""

_RETRY_BACKOFF = Backoff(base=1.0, cap=60.0)
"""Waits between tries of one request: 1 s, then 2 s, 4 s ... (jittered), or what a 429 asks."""

_MAX_CONCURRENT_REQUESTS = 4
"""Requests one `embed` call keeps in flight: enough to hide latency when Vertex AI takes one
text per request, few enough not to trip rate limits on their own."""

# Indirection so tests can skip the real waiting without patching asyncio for everyone.
_sleep = asyncio.sleep


class GeminiEmbedder:
    """Google's text embeddings (default `gemini-embedding-001`) through google-genai.

    Connection settings are resolved exactly as `google.genai.Client` resolves them: an API key
    (argument, or GOOGLE_API_KEY / GEMINI_API_KEY) for the Gemini API, or Vertex AI with
    `vertexai=True` (or GOOGLE_GENAI_USE_VERTEXAI) and a project and location (arguments, or
    GOOGLE_CLOUD_PROJECT / GOOGLE_CLOUD_LOCATION) with Application Default Credentials. The
    client is created on the first `embed`, so building an embedder (e.g. at import time, or in
    tests) needs no credentials; pass `client` to share or configure one yourself.

    Args:
      model: the embedding model.
      dimensions: vector size, sent as `output_dimensionality`. gemini-embedding-001 is trained
        so that prefixes of its 3072 values still work (Google recommends 768, 1536 or 3072);
        sizes below 3072 are L2-normalised here, as Google's docs require for truncated outputs.
      client: an existing `google.genai.Client` (then no other connection argument is allowed).
      api_key, vertexai, project, location: passed to `google.genai.Client`.
      batch_size: texts per request (the Gemini API takes at most 100). On Vertex AI, Gemini
        embedding models take one text per request, so requests there carry one text each.
      max_retries: further attempts after a transient failure (a rate limit, a server error, a
        timeout: `adk_memory._retry.is_transient`), with exponential backoff and jitter; after
        that the last error is raised. Permanent failures (e.g. a rejected key) are raised at
        once.
    """

    def __init__(
        self,
        model: str = "gemini-embedding-001",
        *,
        dimensions: int = 768,
        client: genai.Client | None = None,
        api_key: str | None = None,
        vertexai: bool | None = None,
        project: str | None = None,
        location: str | None = None,
        batch_size: int = 100,
        max_retries: int = 3,
    ) -> None:
        if dimensions < 1:
            raise InputValidationError("dimensions must be at least 1.")
        if batch_size < 1:
            raise InputValidationError("batch_size must be at least 1.")
        if max_retries < 0:
            raise InputValidationError("max_retries must be 0 or more.")
        settings: dict[str, Any] = {
            "api_key": api_key,
            "vertexai": vertexai,
            "project": project,
            "location": location,
        }
        given = sorted(name for name, value in settings.items() if value is not None)
        if client is not None and given:
            raise InputValidationError(
                f"Pass either client or connection settings, not both (got {', '.join(given)})."
            )
        self.model = model
        self.dimensions = dimensions
        self.batch_size = batch_size
        self.max_retries = max_retries
        self._client = client
        self._settings = settings

    @property
    def client(self) -> genai.Client:
        """The google-genai client, created on first use from the connection settings."""
        if self._client is None:
            self._client = genai.Client(**self._settings)
        return self._client

    def _texts_per_request(self, client: genai.Client) -> int:
        # google-genai sends Gemini embedding models on Vertex AI one content per request
        # (gemini-embedding-001 through `predict`, which takes one instance; newer ones through
        # `embedContent`, which it refuses to send more than one content to).
        if client.vertexai and ("gemini" in self.model or "maas" in self.model):
            return 1
        return self.batch_size

    async def embed(
        self, texts: Sequence[str], *, task: EmbeddingTask = "document"
    ) -> list[list[float]]:
        """One vector per text, in order: RETRIEVAL_DOCUMENT for facts, RETRIEVAL_QUERY for
        searches (the model embeds the two asymmetrically, so the task matters)."""
        items = _check_texts(texts)
        if task not in _GEMINI_TASK_TYPES:
            raise InputValidationError(f"task must be 'document' or 'query', not {task!r}.")
        if not items:
            return []
        client = self.client
        config = types.EmbedContentConfig(
            task_type=_GEMINI_TASK_TYPES[task], output_dimensionality=self.dimensions
        )
        size = self._texts_per_request(client)
        batches = [items[i : i + size] for i in range(0, len(items), size)]
        limit = asyncio.Semaphore(_MAX_CONCURRENT_REQUESTS)

        async def run(batch: list[str]) -> list[list[float]]:
            async with limit:
                return await self._embed_batch(client, batch, config)

        tasks = [asyncio.ensure_future(run(batch)) for batch in batches]
        try:
            results = await asyncio.gather(*tasks)
        except BaseException:
            # gather leaves the other requests running; stop them rather than leak them.
            for pending in tasks:
                pending.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
            raise
        return [vector for result in results for vector in result]

    async def _embed_batch(
        self, client: genai.Client, batch: list[str], config: types.EmbedContentConfig
    ) -> list[list[float]]:
        response = await retry_call(
            lambda: client.aio.models.embed_content(
                model=self.model, contents=batch, config=config
            ),
            RetryPolicy(_RETRY_BACKOFF, max_attempts=self.max_retries + 1),
            sleep=_sleep,
        )
        return self._vectors(response, expected=len(batch))

    def _vectors(self, response: types.EmbedContentResponse, *, expected: int) -> list[list[float]]:
        embeddings = response.embeddings or []
        if len(embeddings) != expected:
            raise GenerationOutputError(
                f"{self.model} returned {len(embeddings)} embeddings for {expected} texts."
            )
        vectors: list[list[float]] = []
        for embedding in embeddings:
            values = [float(v) for v in embedding.values or []]
            if len(values) != self.dimensions:
                raise GenerationOutputError(
                    f"{self.model} returned a vector of {len(values)} values, expected "
                    f"{self.dimensions}; does the model support output_dimensionality="
                    f"{self.dimensions}?"
                )
            if self.dimensions < _GEMINI_FULL_DIMENSIONS:
                values = _l2_normalise(values)
            vectors.append(values)
        return vectors


# ----------------------------------------------------------------------------------- Local

_E5_NAME = re.compile(r"(?<![a-z0-9])e5(?![a-z0-9])", re.IGNORECASE)
_E5_PREFIXES: dict[str, str] = {"query": "query: ", "document": "passage: "}


def _import_sentence_transformers() -> Any:
    try:
        import sentence_transformers
    except ImportError as exc:
        raise ImportError(
            "LocalEmbedder needs sentence-transformers, which is not installed: "
            'pip install "adk-memory[local]"'
        ) from exc
    return sentence_transformers


class LocalEmbedder:
    """A sentence-transformers model run in-process: no API key, no network after download.

    sentence-transformers (and torch) are imported and the model loaded on first use, once, so
    the package works without them and constructing this costs nothing. Reading `dimensions`
    loads the model (its size comes from the model); on Python < 3.12, `isinstance(x, Embedder)`
    reads it too, so `PostgresMemoryService(embedder=LocalEmbedder())` loads the model there.
    Loading blocks; `await embedder.load()` at startup does it in a thread instead.

    Encoding runs in a worker thread (`asyncio.to_thread`) so the event loop keeps serving, and
    vectors are L2-normalised. `task` is ignored, except for E5 models (a name containing "e5"
    as a word, e.g. `intfloat/multilingual-e5-small`), which are trained with "query: " and
    "passage: " prefixes and lose quality without them; those are added for queries and
    documents respectively.

    Args:
      model_name_or_path: a Hugging Face model id or a local directory.
      device: "cpu", "cuda", "mps", ...; None: sentence-transformers picks.
      batch_size: texts per forward pass.
    """

    def __init__(
        self,
        model_name_or_path: str = "sentence-transformers/all-MiniLM-L6-v2",
        *,
        device: str | None = None,
        batch_size: int = 64,
    ) -> None:
        if batch_size < 1:
            raise InputValidationError("batch_size must be at least 1.")
        self.model_name_or_path = model_name_or_path
        self.device = device
        self.batch_size = batch_size
        self._prefixes = _E5_PREFIXES if _E5_NAME.search(model_name_or_path) else None
        self._model: Any = None
        self._dimensions = 0
        self._lock = threading.Lock()

    def _load(self) -> Any:
        # Locked: the first `dimensions` read (event loop thread) and the first encode (worker
        # thread) may race, and a model must not be loaded twice.
        with self._lock:
            if self._model is None:
                st = _import_sentence_transformers()
                model = st.SentenceTransformer(self.model_name_or_path, device=self.device)
                size = model.get_sentence_embedding_dimension()
                if not size:
                    raise GenerationOutputError(
                        f"{self.model_name_or_path} does not report its embedding dimension."
                    )
                self._dimensions = int(size)
                self._model = model
            return self._model

    @property
    def dimensions(self) -> int:
        """The model's vector size (loads the model on first read)."""
        if self._model is None:
            self._load()
        return self._dimensions

    async def load(self) -> None:
        """Load the model now, in a worker thread, rather than on first use."""
        await asyncio.to_thread(self._load)

    def _encode(self, texts: list[str]) -> list[list[float]]:
        model = self._load()
        encoded = model.encode(
            texts,
            batch_size=self.batch_size,
            normalize_embeddings=True,
            convert_to_numpy=True,
            show_progress_bar=False,
        )
        rows = encoded.tolist() if hasattr(encoded, "tolist") else encoded
        vectors = [[float(v) for v in row] for row in rows]
        if len(vectors) != len(texts) or any(len(v) != self._dimensions for v in vectors):
            raise GenerationOutputError(
                f"{self.model_name_or_path} returned vectors of the wrong size."
            )
        return vectors

    async def embed(
        self, texts: Sequence[str], *, task: EmbeddingTask = "document"
    ) -> list[list[float]]:
        """One normalised vector per text, in order (see the class for what `task` does)."""
        items = _check_texts(texts)
        if task not in _E5_PREFIXES:
            raise InputValidationError(f"task must be 'document' or 'query', not {task!r}.")
        if not items:
            return []
        if self._prefixes is not None:
            items = [self._prefixes[task] + text for text in items]
        return await asyncio.to_thread(self._encode, items)
