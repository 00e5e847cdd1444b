"""Checks the Python client openapi-python-client generates from docs/openapi.json.

Run by `cargo xtask generated-client`, in the virtual environment that holds the
generator, with the generated package's parent folder as GENERATED_CLIENT (the package
is `muster_api`) and the document as OPENAPI_DOCUMENT.

`operations`: every operation of the document has its module in the generated client;
fails listing the ones the generator left out (it drops an operation whose body or
parameters it cannot build, with only a warning).

`live`: the generated client, with an API key (MUSTER_API_KEY, read and write scopes)
against the server at MUSTER_SERVER, creates a task (nested metadata included), updates
it, moves it and reads it back, as a Python program built on the document would.
"""

import json
import os
import pathlib
import sys
import uuid

sys.path.insert(0, os.environ["GENERATED_CLIENT"])


def operations() -> None:
    from openapi_python_client.strings import PythonIdentifier

    document = json.loads(pathlib.Path(os.environ["OPENAPI_DOCUMENT"]).read_text())
    api = pathlib.Path(os.environ["GENERATED_CLIENT"]) / "muster_api" / "api"
    generated = {module.stem for module in api.glob("*/*.py") if module.stem != "__init__"}
    wanted = {}
    for path, item in document["paths"].items():
        for method, operation in item.items():
            if isinstance(operation, dict) and "operationId" in operation:
                # The generator names an operation's module so (default field prefix).
                module = str(PythonIdentifier(operation["operationId"], prefix="field_"))
                wanted[module] = f"{method.upper()} {path} ({operation['operationId']})"
    missing = sorted(wanted[m] for m in wanted.keys() - generated)
    if missing:
        print(
            f"openapi-python-client left out {len(missing)} of {len(wanted)} operations:",
            *missing,
            sep="\n  ",
        )
        sys.exit(1)
    print(f"openapi-python-client generated all {len(wanted)} operations")


def live() -> None:
    from muster_api import AuthenticatedClient
    from muster_api.api.tasks import create_task, get_task, transition_task, update_task
    from muster_api.models import (
        CreateTaskRequest,
        CreateTaskRequestMetadataType0,
        DataTaskResponse,
        PatchTaskRequest,
        PatchTaskRequestMetadata,
        TaskStatus,
        TransitionRequest,
    )

    client = AuthenticatedClient(
        base_url=os.environ["MUSTER_SERVER"], token=os.environ["MUSTER_API_KEY"]
    )

    def task_of(response, step: str):
        # A typed answer, or a failure that says what the server said.
        assert response.status_code == 200, (step, response.status_code, response.content)
        assert isinstance(response.parsed, DataTaskResponse), (step, response.parsed)
        return response.parsed.data

    marker = str(uuid.uuid4())
    metadata = CreateTaskRequestMetadataType0.from_dict(
        {"source": "generated-client", "run": marker, "nested": {"list": [1, "two", None]}}
    )
    with client as http:
        created = task_of(
            create_task.sync_detailed(
                client=http,
                body=CreateTaskRequest(title="Generated client", metadata=metadata, tags=["py"]),
            ),
            "create",
        )
        assert created.status == TaskStatus.TODO, created.status
        updated = task_of(
            update_task.sync_detailed(
                created.id,
                client=http,
                body=PatchTaskRequest(
                    title="Generated client, renamed",
                    metadata=PatchTaskRequestMetadata.from_dict({"run": marker, "step": 2}),
                ),
            ),
            "update",
        )
        assert updated.title == "Generated client, renamed", updated.title
        moved = task_of(
            transition_task.sync_detailed(
                created.id, client=http, body=TransitionRequest(status=TaskStatus.BACKLOG)
            ),
            "transition",
        )
        assert moved.status == TaskStatus.BACKLOG, moved.status
        read = task_of(get_task.sync_detailed(created.id, client=http), "read")
        assert read.id == created.id
        assert read.status == TaskStatus.BACKLOG, read.status
        assert read.title == "Generated client, renamed", read.title
        # Free-form JSON arrives as it was sent (a dict in Python).
        assert read.metadata["run"] == marker and read.metadata["step"] == 2, read.metadata
    print("the generated client created, updated, moved and read a task")


if __name__ == "__main__":
    {"operations": operations, "live": live}[sys.argv[1]]()
