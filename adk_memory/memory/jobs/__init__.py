"""The durable job queue that runs memory generation, and its worker.

Modules: `queue` (the queue's statements: enqueue, claim with typed payloads, the ownership
check and completion inside a job's transaction, retries, dead letters; the only module that
names the jobs table) and `worker` (the loop that claims and runs jobs, and its tally).
"""

from .queue import ClaimedJob, JobQueue, JobRecord, JobStatus, backoff
from .worker import Handler, Worker, WorkerStats

__all__ = [
    "ClaimedJob",
    "Handler",
    "JobQueue",
    "JobRecord",
    "JobStatus",
    "Worker",
    "WorkerStats",
    "backoff",
]
