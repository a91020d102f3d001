"""Retrieval at scale: ONNX/OpenVINO embedders exported offline, FAISS index plans by corpus size.

The retriever itself (:mod:`programs.retriever`) and the embedder registry
(:mod:`programs.embedders`) use these; nothing here loads a model at import.
"""
