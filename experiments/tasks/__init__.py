"""Task registry: a task glues programs, roles, data and metrics for one kind of experiment.

These are the tasks the runner's case loop runs. The bench, which drives that loop stage by stage,
joins them in `experiments.launch.TASKS`, the registry a config is checked against."""

from experiments.tasks.answer_swap import AnswerSwapTask
from experiments.tasks.compare_pivots import ComparePivotsTask
from experiments.tasks.context_enrich import ContextEnrichTask
from experiments.tasks.evaluate import EvaluateTask
from experiments.tasks.faitheval import CounterfactualTask, InconsistentTask, UnanswerableTask
from experiments.tasks.judge_calibration import JudgeCalibrationTask
from experiments.tasks.optimize import OptimizeTask
from experiments.tasks.seed_selection import SeedSelectionTask

TASKS = {
    "seed_selection": SeedSelectionTask,
    "answer_swap": AnswerSwapTask,
    "context_enrich": ContextEnrichTask,
    "unanswerable": UnanswerableTask,
    "inconsistent": InconsistentTask,
    "counterfactual": CounterfactualTask,
    "judge_calibration": JudgeCalibrationTask,
    "evaluate": EvaluateTask,
    "optimize": OptimizeTask,
    "compare_pivots": ComparePivotsTask,
}
