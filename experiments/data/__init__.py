"""Load QA, multiple-choice and passage data as ``dspy.Example``s (or a ``datasets.Dataset``).

Every local file is read line by line and each row is validated *before* it reaches
Hugging Face ``datasets``: a malformed row fails with a :class:`~experiments.data.errors.DataError`
that names the file, the 1-based line number and the field (``data/x.jsonl:17: field 'answers':
expected a non-empty list of strings, got int``). Without this, ``datasets``/Arrow reports a schema
mismatch for a whole shard with no line number, which is useless on an 8k-line file.

The modules, each importing only those listed after it:

- :mod:`~experiments.data.registry`: the shipped data sets by name, and a name or path resolved
  to its file and loader;
- :mod:`~experiments.data.hub`: the same records from the Hugging Face hub (needs a network);
- :mod:`~experiments.data.loaders`: local files as Examples or Datasets;
- :mod:`~experiments.data.converters`: MRQA 2019 rows and ARC hub rows mapped to the records;
- :mod:`~experiments.data.examples`: records as ``dspy.Example``s;
- :mod:`~experiments.data.tables`: records as ``datasets.Dataset``s with one fixed schema;
- :mod:`~experiments.data.records`: the record forms and the checks that make a row one;
- :mod:`~experiments.data.fields`: checks of one field, with messages that say where;
- :mod:`~experiments.data.files`: a file's version (its content hash) and its rows with line numbers;
- :mod:`~experiments.data.errors`: the errors and the wording of their messages.
"""
