"""Case sets shared outside reeval: a run's chosen cases as a Hugging Face dataset folder (Parquet, card,
Croissant), in FaithEval's hub layout, or in ReEval's released JSON (`reeval export`).

- :mod:`.selection` — which cases leave (accepted, reviewed-valid or all), one case set per generator stage
  or compared pivot;
- :mod:`.rows` — the public row of a case and its explicit features;
- :mod:`.privacy` — keys and this machine's paths taken out, and every written file read back for them;
- :mod:`.licence` — the licence and attribution the cases inherit (data/LICENSE), and every layout's LICENSE.md;
- :mod:`.provenance` — generator, pivot, judge, commit, seeds, validity and accuracy, for the card;
- :mod:`.card` — the dataset card; :mod:`.croissant` — `croissant.json`, validated by mlcroissant;
- :mod:`.hf_layout`, :mod:`.faitheval_layout`, :mod:`.reeval_layout` — the three layouts;
- :mod:`.run` — `export_run`, what the command calls.
"""

from experiments.export.run import LAYOUTS, ExportResult, export_run
from experiments.export.selection import CASE_CHOICES

__all__ = ["CASE_CHOICES", "LAYOUTS", "ExportResult", "export_run"]
