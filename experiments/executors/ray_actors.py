"""Cases as Ray tasks on a pool of actors, on one machine or a cluster (`reeval[ray]`).

Each actor builds the run's task once (so it loads its models once) and runs one case at a time;
the driver hands the next case to whichever actor finishes first and stays the only writer of
the checkpoint, so resume and exactly-once semantics are those of a local run. MLflow tracking
stays on the driver too. An actor that dies (segfault, OOM kill, a lost node) costs only the
case it held: that case is recorded `error:worker`, counted against the error budget like any
error, and a fresh actor takes the dead one's place.

Ray's own ActorPool does not say which value a dead actor held nor replace it, hence the small
dispatch loop below.
"""

from __future__ import annotations

import logging
import os
import socket
from collections import deque
from collections.abc import Iterator
from contextlib import contextmanager

from experiments.config import RunConfig
from experiments.executors.errors import ExecutorError
from experiments.executors.worker import CaseWorker, WorkerSpec
from experiments.lm.offline import OFFLINE_DEFAULTS

logger = logging.getLogger(__name__)

# Ray reports usage statistics to its authors unless told not to; reeval never phones home.
# A local instance's raylet starts its workers at niceness 15 unless told otherwise; the actors are the
# run's work, and niced they yielded the cores to every other process (a bench took 121 min, not ~30).
# A cluster started with `ray start` takes the variable from that command's environment.
RAY_DEFAULTS = {"RAY_USAGE_STATS_ENABLED": "0", "RAY_worker_niceness": "0"}


def worker_env(worker_cpus: int) -> dict[str, str]:
    """What an actor's process inherits from the driver: reeval's own settings and the offline
    switches (a cluster node started by `ray start` has its own environment otherwise)."""
    env = {
        k: v for k, v in os.environ.items() if k.startswith("REEVAL_") or k in OFFLINE_DEFAULTS or k == "DSPY_CACHEDIR"
    }
    env["REEVAL_THREADS"] = str(worker_cpus)
    return env


def check_reachable(address: str, timeout: float = 5.0) -> None:
    """Ray retries an unreachable cluster for minutes before it gives up: say so in seconds."""
    host, _, port = address.removeprefix("ray://").rpartition(":")
    try:
        socket.create_connection((host or "127.0.0.1", int(port)), timeout=timeout).close()
    except (OSError, ValueError) as exc:
        raise ExecutorError(
            f"--ray-address {address}: no Ray cluster answers there ({exc}). Start one with "
            "`ray start --head` (it prints the address), or leave the option out for a local "
            "instance."
        ) from None


def worker_error(example, exc: BaseException) -> list[dict]:
    return [
        {
            "id": example.id,
            "seed_id": example.id,
            "status": "error:worker",
            "error": f"{type(exc).__name__}: {exc}"[:2000],
        }
    ]


def connect(address: str | None) -> bool:
    """Join the cluster at `address` (None: RAY_ADDRESS, else the cluster last started on this machine, else
    a new local instance); True when this call started Ray, so the caller shuts it down."""
    for key, value in RAY_DEFAULTS.items():
        os.environ.setdefault(key, value)
    try:
        import ray
    except ImportError:
        raise ExecutorError(
            "run.executor: ray needs Ray installed: pip install 'reeval[ray]' (or run with run.executor: local)"
        ) from None
    if ray.is_initialized():
        return False
    if address:
        check_reachable(address)
    try:
        ray.init(address=address, include_dashboard=False, configure_logging=False)
    except ConnectionError as exc:
        raise ExecutorError(
            f"--ray-address {address}: cannot join the Ray cluster ({exc}). "
            "Start one with `ray start --head`, or leave the option out for a local "
            "instance."
        ) from None
    return True


@contextmanager
def ray_session(address: str | None) -> Iterator[None]:
    """One connection for several executors in a row (a bench's stages): a local instance starts once,
    not once per stage, and stops at the end."""
    owns = connect(address)
    try:
        yield
    finally:
        if owns:
            import ray

            ray.shutdown()


class RayExecutor:
    kind = "ray"

    def __init__(self, run: RunConfig, spec: WorkerSpec, address: str | None = None):
        self.run = run
        self.spec = spec
        self.address = address
        self.workers = 0
        self.deaths = 0
        self.nodes: set[str] = set()
        self._actors: list = []
        self._running: dict = {}  # object ref -> (actor, example)
        self._usage: dict[str, dict] = {}
        self._owns_ray = False

    def __enter__(self) -> RayExecutor:
        self._owns_ray = connect(self.address)
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def describe(self) -> dict:
        described = {
            "executor": self.kind,
            "executor.ray.workers": self.workers,
            "executor.ray.worker_cpus": self.run.ray.worker_cpus,
            "executor.ray.nodes": len(self.nodes),
            "executor.ray.worker_deaths": self.deaths,
        }
        if self.address:
            described["executor.ray.address"] = self.address
        return described

    def _start(self, count: int) -> list:
        import ray

        worker_cls = ray.remote(CaseWorker).options(
            num_cpus=self.run.ray.worker_cpus,
            max_restarts=0,
            max_task_retries=0,
            runtime_env={"env_vars": worker_env(self.run.ray.worker_cpus)},
        )
        return [worker_cls.remote(self._spec_ref) for _ in range(count)]

    def map(self, todo: list) -> Iterator[list[dict]]:
        """Records of each case as it finishes (completion order, not the order of `todo`)."""
        import ray

        if not todo:
            return
        if not self._actors:  # a later map (a bench stage that maps in blocks) reuses the actors and their models
            cpus = ray.cluster_resources().get("CPU", 1)
            self.workers = min(self.run.ray.workers or max(1, int(cpus // self.run.ray.worker_cpus)), len(todo))
            self._spec_ref = ray.put(self.spec)
            self._actors = self._start(self.workers)
            try:
                # A worker that cannot even start (weights missing on a node, an import error) fails the
                # run here with its reason, not as one error:worker per case.
                for info in ray.get([actor.ready.remote() for actor in self._actors]):
                    self.nodes.add(info["host"])
            except ray.exceptions.RayError as exc:
                raise ExecutorError(f"a Ray worker failed to start: {exc}") from None
            logger.info(
                "ray: %d workers × %d CPU on %d node(s)", self.workers, self.run.ray.worker_cpus, len(self.nodes)
            )

        queue = deque(todo)
        running = self._running

        def hand_out(actor) -> None:
            if queue:
                example = queue.popleft()
                running[actor.process.remote(example)] = (actor, example)

        for actor in self._actors:
            hand_out(actor)
        while running:
            [ref], _ = ray.wait(list(running), num_returns=1)
            actor, example = running.pop(ref)
            try:
                records = ray.get(ref)
            except ray.exceptions.RayActorError as exc:
                logger.warning(
                    "ray: the worker running case %s died (%s); a new one takes its place",
                    example.id,
                    type(exc).__name__,
                )
                self.deaths += 1
                records = worker_error(example, exc)
                ray.kill(actor, no_restart=True)
                self._actors.remove(actor)
                [actor] = self._start(1)
                self._actors.append(actor)
            hand_out(actor)
            yield records

    def usage(self) -> dict[str, dict]:
        return self._usage

    def close(self) -> None:
        """Collect what the actors spent, then stop them (and the local instance this run started)."""
        if self._actors:
            import ray

            busy = {id(actor) for actor, _ in self._running.values()}
            for actor in self._actors:
                if id(actor) in busy:  # a run stopped early (error budget): don't wait for its case
                    ray.kill(actor, no_restart=True)
                    continue
                try:
                    for label, stats in ray.get(actor.usage.remote(), timeout=60).items():
                        mine = self._usage.setdefault(label, {})
                        for key, value in stats.items():
                            mine[key] = mine.get(key, 0) + value
                except ray.exceptions.RayError as exc:  # a dead or stuck actor's counts are lost, not the run
                    logger.warning("ray: no usage from a worker (%s)", type(exc).__name__)
                ray.kill(actor, no_restart=True)
            self._actors = []
            self._running.clear()
        if self._owns_ray:
            import ray

            ray.shutdown()
            self._owns_ray = False
