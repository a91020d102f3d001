"""A tiny random BERT sentence model (seconds to build, no download) standing in for MiniLM."""

from __future__ import annotations

from pathlib import Path

WORDS = "the a bridge harbour was designed by john bradfield cheese from somerset river city old new".split()
TEXTS = [
    "the bridge was designed by john bradfield",
    "cheese",
    "the old city by the river was new and the harbour was old " * 3,
    "a bridge from somerset",
]


def build_tiny_model(root: Path):
    """The model saved under ``root / "st"``, and its float32 vectors of TEXTS."""
    import torch
    from sentence_transformers import SentenceTransformer
    from sentence_transformers.sentence_transformer import modules as models
    from transformers import BertConfig, BertModel, BertTokenizerFast

    (root / "vocab.txt").write_text("\n".join(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", *WORDS]) + "\n")
    hf = root / "hf"
    BertTokenizerFast(vocab_file=str(root / "vocab.txt")).save_pretrained(str(hf))
    torch.manual_seed(0)
    config = BertConfig(
        vocab_size=5 + len(WORDS),
        hidden_size=32,
        num_hidden_layers=2,
        num_attention_heads=2,
        intermediate_size=64,
        max_position_embeddings=64,
    )
    BertModel(config).save_pretrained(str(hf))
    model = SentenceTransformer(
        modules=[models.Transformer(str(hf), max_seq_length=48), models.Pooling(32, "mean"), models.Normalize()],
        device="cpu",
    )
    directory = root / "st"
    model.save(str(directory))
    return directory, model.encode(TEXTS, normalize_embeddings=True)
