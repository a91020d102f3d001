"""Provider credentials stay in the environment: nothing the project writes may contain them.

Configs cannot hold a key (the schema refuses one), and DSPy keeps keys out of LM state and
history; what is left is text that comes back from outside — a provider's or proxy's error
message that repeats the request's credentials. `redact` takes the value of every secret-named
environment variable out of such text before it reaches the run store or MLflow.
"""

from __future__ import annotations

import json
import os
import re

# OPENAI_API_KEY, ANTHROPIC_API_KEY, HF_TOKEN, AWS_SECRET_ACCESS_KEY, AZURE_AD_TOKEN, …; also a
# config key or URL parameter named like one (api_key, api-key, token).
_SECRET_NAME = re.compile(r"(^|[-_])(API[-_]?KEY|KEY|TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIALS?)([-_]|$)", re.IGNORECASE)
MIN_LENGTH = 8  # shorter values ("1", "true") would blank out ordinary words
MASK = "[redacted]"


def is_secret_name(name: str) -> bool:
    return bool(_SECRET_NAME.search(name))


def secret_values() -> list[str]:
    """Values of the secret-named environment variables, longest first (a key inside another goes last)."""
    values = {v for k, v in os.environ.items() if is_secret_name(k) and len(v.strip()) >= MIN_LENGTH}
    return sorted(values, key=len, reverse=True)


def redact(text: str, values: list[str] | None = None) -> str:
    for value in secret_values() if values is None else values:
        if value in text:
            text = text.replace(value, MASK)
    return text


def redact_json_line(line: str, values: list[str] | None = None) -> str:
    """`redact` for a serialised JSON line: a value is matched as JSON escaped it."""
    for value in secret_values() if values is None else values:
        escaped = json.dumps(value, ensure_ascii=False)[1:-1]
        if escaped in line:
            line = line.replace(escaped, MASK)
    return line
