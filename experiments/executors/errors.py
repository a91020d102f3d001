"""An executor that cannot run at all: reported in a line or two, exit code 2."""


class ExecutorError(RuntimeError):
    pass
