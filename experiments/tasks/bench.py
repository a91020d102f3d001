"""`task: bench`: the registry's entry for the bench, which runs its own stages (experiments/bench)."""

from __future__ import annotations

from experiments.bench.options import BenchOptions


class BenchTask:
    name = "bench"
    roles = ("targets",)
    optional_roles = ("pivot", "pivots", "judge")
    Options = BenchOptions

    @staticmethod
    def check_config(config) -> None:
        from experiments.bench.driver import check_config

        check_config(config)

    @staticmethod
    def drive(config, **kwargs):
        """Run the whole bench (instead of the runner's one case loop); returns the runner's RunResult."""
        from experiments.bench.driver import run_bench

        return run_bench(config, **kwargs)
