"""The settings of one LM in one role, as a config gives them: the type every LM-facing module reads.

It sits with the LM runtime, below the experiment schema (experiments.config), so that building an LM
never imports the schema of a whole experiment.
"""

from __future__ import annotations

from typing import Literal
from urllib.parse import parse_qsl, urlsplit

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, field_validator, model_serializer, model_validator

from experiments.lm.prices import Price
from experiments.lm.roster import get_spec
from experiments.secrets import is_secret_name


class LMConfig(BaseModel):
    """One LM in one role. Decoding is explicit and recorded: it changes the answers."""

    model_config = ConfigDict(extra="forbid")

    name: str = Field(description="local roster name (see `reeval models`) or a LiteLLM string provider/model")
    temperature: float = Field(0.0, ge=0, description="sampling temperature; 0 is greedy")
    top_p: float = Field(1.0, gt=0, le=1, description="nucleus sampling mass")
    max_tokens: int = Field(128, ge=1, description="most tokens a reply may have")
    seed: int = Field(0, description="sampling seed (local models and providers that take one)")
    api_base: str | None = Field(None, description="the server's URL for an OpenAI-compatible, vLLM or Ollama model")
    num_retries: int = Field(
        3,
        ge=0,
        description="provider/server LMs: retries of a rate-limited (429), failed "
        "(5xx), timed-out or unreachable call, with DSPy's exponential backoff (1, 2, 4 s…) "
        "or the server's Retry-After",
    )
    # None, not 120, as the default: a run's identity leaves defaults out, and stored configs say `null`.
    timeout: float | None = Field(
        None,
        gt=0,
        description="provider/server LMs: seconds to wait for the next "
        "byte of a reply before the attempt counts as timed out (default 120; connecting "
        "waits at most 10 s); a hung server ends as error:timeout after about "
        "timeout x (num_retries + 1) seconds plus the backoffs",
    )
    n_ctx: int = Field(8192, ge=256, description="local models: llama.cpp context length in tokens")
    cache: bool = Field(True, description="answer repeated calls from the call cache (~/.cache/reeval)")
    adapter: Literal["json", "chat"] = Field("json", description="how DSPy formats prompts and parses replies")
    price: Price | None = Field(
        None,
        description="dollars per million prompt and completion tokens, for a provider or server model LiteLLM's "
        "cost map lacks (default: the map's price; a local model costs none); not part of the run's identity",
    )
    label: str | None = Field(
        None,
        min_length=1,
        description="what case ids, records, tables, metric names and the report call this model (default: "
        "its name; entries of one name that differ in api_base, or targets or pivots of one name that differ "
        "in decoding, are labelled by what differs, e.g. openai/m@gpu-a:8000, and `reeval validate` says so)",
    )
    # Whether the label is settled (given by the config, or derived once from the entries beside it): a label
    # that is only the name yields to one told apart by what differs; a settled one never changes again.
    _label_given: bool | None = PrivateAttr(None)

    @model_validator(mode="after")
    def _label_defaults_to_name(self) -> LMConfig:
        # pydantic runs this again on an instance placed in another config (a bench stage's): the first run decides.
        if self._label_given is None:
            self._label_given = self.label is not None
            if self.label is None:
                self.label = self.name
        return self

    def settle_label(self, label: str) -> None:
        """A label derived from the entries beside this one: kept from now on, as if the config gave it, so
        that a config holding only some of the entries (a bench stage's) calls the model the same."""
        self.label = label
        self._label_given = True

    @model_serializer(mode="wrap")
    def _label_only_when_it_differs(self, handler):
        # A label equal to the name adds nothing: left out, a config written before labels existed keeps
        # its identity (run id), and stored configs stay as they were.
        data = handler(self)
        if isinstance(data, dict) and data.get("label") == self.name:
            del data["label"]
        return data

    @property
    def label_given(self) -> bool:
        return bool(self._label_given)

    def model_copy(self, *, update=None, deep: bool = False) -> LMConfig:
        # A copy renamed without a label of its own is called by its new name, as a config naming it would be.
        copy = super().model_copy(update=update, deep=deep)
        if update and "name" in update and "label" not in update and not self.label_given:
            copy.label = copy.name
        return copy

    @field_validator("api_base")
    @classmethod
    def _no_credentials(cls, api_base: str | None) -> str | None:
        if api_base is None:
            return None
        url = urlsplit(api_base)
        if url.username or url.password or any(is_secret_name(k) for k, _ in parse_qsl(url.query)):
            # Not echoed: the message would carry the credential into logs.
            raise ValueError(
                "holds a credential; a config is logged and hashed, so give the server's address "
                "only and the key in the provider's environment variable (OPENAI_API_KEY, …)"
            )
        return api_base

    @field_validator("name")
    @classmethod
    def _known_model(cls, name: str) -> str:
        if "/" not in name:
            get_spec(name)  # raises with "did you mean"
        return name
