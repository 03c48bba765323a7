"""TLS: the server on a self-signed certificate, the client trusting it through --ca-file."""

from __future__ import annotations

import http.client
import json
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.conftest import run_ecc


@pytest.fixture
def certificate(tmp_path: Path) -> tuple[Path, Path]:
    openssl = shutil.which("openssl")
    assert openssl, "openssl is needed for the TLS tests"
    cert, key = tmp_path / "cert.pem", tmp_path / "key.pem"
    subprocess.run(
        [
            *(openssl, "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2"),
            *("-keyout", str(key), "-out", str(cert), "-subj", "/CN=127.0.0.1"),
            *("-addext", "subjectAltName=IP:127.0.0.1"),
        ],
        check=True,
        capture_output=True,
    )
    key.chmod(0o600)
    return cert, key


def test_https_with_a_trusted_self_signed_certificate(start_server, certificate) -> None:
    cert, key = certificate
    server = start_server(extra_args=["--tls-cert", str(cert), "--tls-key", str(key)])
    assert any("listening on https://127.0.0.1:" in line for line in server.log)
    url = f"https://127.0.0.1:{server.port}"
    added = run_ecc(
        "remote", "add", "tls", url, "--token-file", str(server.token_file), "--ca-file", str(cert)
    )
    assert added.returncode == 0, added.stderr
    listed = run_ecc("sessions", "--remote", "tls", "--all", "--json")
    assert listed.returncode == 0, listed.stderr
    assert json.loads(listed.stdout) == []

    # without the CA the client refuses the certificate: one line, no traceback
    run_ecc("remote", "add", "untrusted", url, "--token-file", str(server.token_file))
    refused = run_ecc("sessions", "--remote", "untrusted")
    assert refused.returncode == 1
    assert "CERTIFICATE_VERIFY_FAILED" in refused.stderr
    assert "Traceback" not in refused.stderr

    # plain HTTP to the TLS port gets no HTTP answer (server.call speaks plain HTTP)
    with pytest.raises((http.client.HTTPException, OSError)):
        server.call("GET", "/v1/health", token=None, timeout=10)


def test_tls_options_go_together(tmp_path: Path, certificate) -> None:
    cert, _ = certificate
    result = run_ecc("remote", "serve", "--port", "0", "--tls-cert", str(cert))
    assert result.returncode == 1
    assert "--tls-cert and --tls-key go together" in result.stderr
