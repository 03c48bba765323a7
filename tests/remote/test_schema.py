"""schemathesis against the running server's own /openapi.json: no 5xx, no schema violation.

Valid (positive) and invalid (negative) requests are generated for every operation and sent over
real HTTP with a valid token. Bounded: a few dozen examples per operation and mode. Sessions it
may create can only use the ``echoer`` harness (``/bin/echo``) under a throw-away allowed root,
so generated text is never run as a command.
"""

from __future__ import annotations

import schemathesis
from hypothesis import HealthCheck, given, settings
from schemathesis.checks import not_a_server_error
from schemathesis.generation import GenerationMode
from schemathesis.specs.openapi.checks import (
    content_type_conformance,
    negative_data_rejection,
    response_headers_conformance,
    response_schema_conformance,
    status_code_conformance,
)

from tests.remote.conftest import Server

EXAMPLES = 25
CHECKS = [
    not_a_server_error,
    status_code_conformance,
    content_type_conformance,
    response_headers_conformance,
    response_schema_conformance,
]


def drops_the_token(case) -> bool:
    """A negative case made by removing the required Authorization header: it is sent without
    the token (sending it anyway would make a valid request the check counts as accepted)."""
    data = getattr(getattr(case.meta, "phase", None), "data", None)
    return any(
        mutation.parameter_location.value == "header"
        and str(mutation.original_value).lower() == "authorization"
        for mutation in getattr(data, "mutations", None) or ()
    )


def test_openapi_fuzzing_finds_no_server_error_and_no_schema_violation(start_server) -> None:
    server: Server = start_server(
        extra_config='[harness_runners.echoer]\nprogram = "/bin/echo"\n'
        '[agent_profiles.quick]\nharness = "echoer"\n',
        remote={"allowed_harnesses": ["echoer"], "max_body_bytes": 16384},
    )
    # a few real sessions so that list/get/output have something to return
    for word in ("alpha", "beta"):
        reply = server.call(
            "POST",
            "/v1/sessions",
            {"task": word, "repository": str(server.root), "harness": "echoer", "worktree": False},
        )
        assert reply.status == 201, reply.body
        server.wait_state(reply.body["id"], {"completed", "failed"})

    # 413 and 431 are rejections too (the body or header caps come before field validation)
    rejected = ["400", "401", "403", "404", "405", "406", "409", "413", "415", "422", "428"]
    config = schemathesis.Config.from_dict(
        {"checks": {"negative_data_rejection": {"expected-statuses": [*rejected, "429", "431"]}}}
    )
    schema = schemathesis.openapi.from_url(server.url + "/openapi.json", config=config)
    auth = {"Authorization": f"Bearer {server.token}"}
    operations = [result.ok() for result in schema.get_all_operations()]
    assert len(operations) == 12
    seen: dict[str, set[int]] = {}

    def fuzzer(operation, mode):
        checks = CHECKS + ([negative_data_rejection] if mode == GenerationMode.NEGATIVE else [])

        @given(case=operation.as_strategy(generation_mode=mode))
        @settings(
            max_examples=EXAMPLES,
            deadline=None,
            database=None,
            derandomize=True,
            suppress_health_check=list(HealthCheck),
        )
        def fuzz(case) -> None:
            headers = {} if drops_the_token(case) else auth
            response = case.call_and_validate(
                base_url=server.url, headers=headers, checks=checks, timeout=30
            )
            seen.setdefault(case.operation.label, set()).add(response.status_code)

        return fuzz

    for operation in operations:
        fuzzer(operation, GenerationMode.POSITIVE)()
        if operation.label != "GET /v1/health":  # it takes no input to get wrong
            fuzzer(operation, GenerationMode.NEGATIVE)()

    # every operation was exercised, and nothing answered 5xx
    assert len(seen) == 12
    assert all(code < 500 for codes in seen.values() for code in codes), seen
