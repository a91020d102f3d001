"""`croissant.json`: the export's Croissant metadata (schema.org Dataset, its Parquet files, one record set per
case set with every field described) with the Responsible-AI fields that dataset tracks ask for.

Built with ``mlcroissant``'s own classes, so a metadata object it cannot represent fails here rather than in a
reviewer's validator, and read back through ``mlcroissant.Dataset``, which validates it.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from experiments.export.rows import FIELDS

CROISSANT_FILE = "croissant.json"
CROISSANT_VERSION = "http://mlcommons.org/croissant/1.1"
LIST_FIELDS = ("answers", "original_answers")
FLOAT_FIELDS = ("judge_p_valid",)


@dataclass
class CroissantInputs:
    """What the metadata says beyond the files: written by the card's module from the same facts."""

    name: str
    description: str
    licence_urls: list[str]
    version: str
    cite_as: str
    date: str  # ISO date of the export
    parquet: dict[str, str]  # case set name -> its files' glob under the folder
    collection: str
    preprocessing: list[str]
    annotation: list[str]
    machine_tools: list[str]
    limitations: list[str]
    biases: list[str]
    use_cases: list[str]
    sensitive: list[str]
    maintenance: str
    social_impact: str
    annotations_per_item: str


def _fields(mlc, set_id: str, file_set: str) -> list:
    fields = []
    for name, description in FIELDS.items():
        if name == "choices":
            for part in ("label", "text"):
                fields.append(
                    mlc.Field(
                        id=f"{set_id}/choices_{part}",
                        name=f"choices_{part}",
                        description=f"{description}: the options' {part}s",
                        data_types=[mlc.DataType.TEXT],
                        is_array=True,
                        array_shape="-1",
                        source=mlc.Source(
                            file_set=file_set,
                            extract=mlc.Extract(column="choices"),
                            transforms=[mlc.Transform(json_path=part)],
                        ),
                    )
                )
            continue
        kind = mlc.DataType.FLOAT if name in FLOAT_FIELDS else mlc.DataType.TEXT
        array = {"is_array": True, "array_shape": "-1"} if name in LIST_FIELDS else {}
        fields.append(
            mlc.Field(
                id=f"{set_id}/{name}",
                name=name,
                description=description,
                data_types=[kind],
                source=mlc.Source(file_set=file_set, extract=mlc.Extract(column=name)),
                **array,
            )
        )
    return fields


def croissant_metadata(inputs: CroissantInputs) -> dict[str, Any]:
    import mlcroissant as mlc

    distribution, record_sets = [], []
    for set_name, pattern in inputs.parquet.items():
        file_set = f"parquet-{set_name}"
        distribution.append(
            mlc.FileSet(
                id=file_set,
                name=file_set,
                description=f"Parquet files of the case set '{set_name}' (split test)",
                encoding_formats=["application/x-parquet"],
                includes=[pattern],
            )
        )
        record_sets.append(
            mlc.RecordSet(
                id=set_name,
                name=set_name,
                description=f"One case per record: the '{set_name}' case set",
                key=[f"{set_name}/id"],
                fields=_fields(mlc, set_name, file_set),
            )
        )
    metadata = mlc.Metadata(
        name=inputs.name,
        description=inputs.description,
        license=inputs.licence_urls,
        version=inputs.version,
        cite_as=inputs.cite_as,
        date_published=inputs.date,
        conforms_to=CROISSANT_VERSION,
        url="",
        distribution=distribution,
        record_sets=record_sets,
        data_collection=inputs.collection,
        data_collection_type=["Machine-generated (language-model rewrites of public QA rows)"],
        data_preprocessing_protocol=inputs.preprocessing,
        data_annotation_protocol=inputs.annotation,
        data_annotation_platform=["reeval review (blind page or sheet)"],
        machine_annotation_tools=inputs.machine_tools,
        annotations_per_item=inputs.annotations_per_item,
        data_limitations=inputs.limitations,
        data_biases=inputs.biases,
        data_use_cases=inputs.use_cases,
        personal_sensitive_information=inputs.sensitive,
        data_social_impact=inputs.social_impact,
        data_release_maintenance_plan=inputs.maintenance,
    )
    return metadata.to_json()


def write_croissant(folder: Path, inputs: CroissantInputs) -> Path:
    path = folder / CROISSANT_FILE
    path.write_text(json.dumps(croissant_metadata(inputs), indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    return path


def validate_croissant(path: Path) -> list[str]:
    """Warnings of a Croissant file that mlcroissant reads; its errors raise mlcroissant.ValidationError."""
    import mlcroissant as mlc

    dataset = mlc.Dataset(jsonld=path)
    return list(dataset.metadata.ctx.issues.warnings)


def read_records(path: Path, record_set: str) -> list[dict[str, Any]]:
    """The records of one record set as mlcroissant reads them from the files the metadata points at."""
    import mlcroissant as mlc

    return list(mlc.Dataset(jsonld=path).records(record_set=record_set))
