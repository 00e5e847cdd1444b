"""Drives Muster with the official A2A Python SDK (a2a-sdk), as an A2A client would.

Run by `cargo xtask a2a-clients` against a live server: MUSTER_SERVER is its base URL,
MUSTER_API_KEY an API key with read and write scopes. For each binding (JSON-RPC, then
HTTP+JSON) it sends a message, reads, lists, streams, subscribes to and cancels tasks,
sets, reads and deletes push notification configs and receives their pushes on a
loopback receiver (the server must let webhooks reach loopback over http), and moves
tasks through Muster's own API meanwhile, as the organization's people and agents
would. The Agent Card is validated against the A2A 1.0 schema first. Any failure
raises; success prints one line per binding.
"""

import asyncio
import http.server
import json
import os
import pathlib
import threading
import uuid

import httpx
import jsonschema
from a2a.client import A2ACardResolver, ClientConfig, ClientFactory
from a2a.types import (
    AuthenticationInfo,
    CancelTaskRequest,
    DeleteTaskPushNotificationConfigRequest,
    GetTaskPushNotificationConfigRequest,
    GetTaskRequest,
    ListTaskPushNotificationConfigsRequest,
    ListTasksRequest,
    Message,
    Part,
    Role,
    SendMessageConfiguration,
    SendMessageRequest,
    SubscribeToTaskRequest,
    TaskPushNotificationConfig,
    TaskState,
)
from a2a.utils.errors import TaskNotCancelableError, TaskNotFoundError

SERVER = os.environ["MUSTER_SERVER"]
KEY = os.environ["MUSTER_API_KEY"]
SCHEMA = pathlib.Path(__file__).with_name("agent-card.schema.json")


def message(text: str) -> Message:
    return Message(role=Role.ROLE_USER, message_id=str(uuid.uuid4()), parts=[Part(text=text)])


def state(status) -> str:
    return TaskState.Name(status.state)


async def transition(http: httpx.AsyncClient, task_id: str, status: str) -> None:
    """Moves a task through Muster's API, as the organization's people would."""
    reply = await http.post(f"{SERVER}/tasks/{task_id}/transition", json={"status": status})
    assert reply.status_code == 200, (status, reply.status_code, reply.text)


async def validate_card(http: httpx.AsyncClient):
    card = await A2ACardResolver(http, SERVER).get_agent_card()
    raw = (await http.get(f"{SERVER}/.well-known/agent-card.json")).json()
    schema = json.loads(SCHEMA.read_text())
    jsonschema.validate(raw, schema, cls=jsonschema.Draft202012Validator)
    return card


async def send(client, text: str) -> str:
    """Sends a message (SendMessage, answered at once) and answers the task's id."""
    request = SendMessageRequest(
        message=message(text), configuration=SendMessageConfiguration(return_immediately=True)
    )
    events = [event async for event in client.send_message(request)]
    assert len(events) == 1 and events[0].HasField("task"), events
    task = events[0].task
    assert state(task.status) == "TASK_STATE_SUBMITTED", task
    assert task.context_id == task.id, task
    return task.id


class Receiver:
    """Push notifications land here: every POST's headers and JSON body, answered 200."""

    def __init__(self) -> None:
        self.pushes = []
        pushes = self.pushes

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_POST(self):  # noqa: N802 (the standard library's name)
                body = self.rfile.read(int(self.headers.get("content-length", "0")))
                headers = {k.lower(): v for k, v in self.headers.items()}
                pushes.append((self.path, headers, json.loads(body)))
                self.send_response(200)
                self.send_header("content-length", "0")
                self.end_headers()

            def log_message(self, *args):
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def url(self, path: str) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}{path}"

    async def wait_for(self, count: int) -> list:
        for _ in range(200):
            if len(self.pushes) >= count:
                return list(self.pushes)
            await asyncio.sleep(0.05)
        raise AssertionError(f"{count} pushes expected, got {self.pushes}")

    def stop(self) -> None:
        self.server.shutdown()


async def check_push(api: httpx.AsyncClient, plain, binding: str) -> None:
    """Push configs set, read and deleted with the SDK; their pushes received."""
    receiver = Receiver()
    try:
        path = f"/push/{binding}"
        # A config that comes with the message creating the task.
        config = TaskPushNotificationConfig(url=receiver.url(path), token="tok-inline")
        request = SendMessageRequest(
            message=message("Push me"),
            configuration=SendMessageConfiguration(task_push_notification_config=config),
        )
        events = [event async for event in plain.send_message(request)]
        task_id = events[0].task.id
        # And one set on its own, with credentials.
        made = await plain.create_task_push_notification_config(
            TaskPushNotificationConfig(
                task_id=task_id,
                id="sdk-1",
                url=receiver.url(path),
                token="tok-1",
                authentication=AuthenticationInfo(scheme="Bearer", credentials="cred-1"),
            )
        )
        assert made.id == "sdk-1" and made.task_id == task_id, made
        assert made.authentication.scheme == "Bearer" and not made.authentication.credentials
        listed = await plain.list_task_push_notification_configs(
            ListTaskPushNotificationConfigsRequest(task_id=task_id)
        )
        assert len(listed.configs) == 2, listed
        got = await plain.get_task_push_notification_config(
            GetTaskPushNotificationConfigRequest(task_id=task_id, id="sdk-1")
        )
        assert got.url == receiver.url(path), got

        await transition(api, task_id, "in_progress")
        pushes = await receiver.wait_for(2)
        tokens = sorted(headers.get("x-a2a-notification-token") for (_, headers, _) in pushes)
        assert tokens == ["tok-1", "tok-inline"], pushes
        for push_path, headers, body in pushes:
            assert push_path == path, push_path
            assert headers["content-type"] == "application/a2a+json", headers
            update = body["statusUpdate"]
            assert update["taskId"] == task_id, body
            assert update["status"]["state"] == "TASK_STATE_WORKING", body
            if headers["x-a2a-notification-token"] == "tok-1":
                assert headers["authorization"] == "Bearer cred-1", headers

        await plain.delete_task_push_notification_config(
            DeleteTaskPushNotificationConfigRequest(task_id=task_id, id="sdk-1")
        )
        listed = await plain.list_task_push_notification_configs(
            ListTaskPushNotificationConfigsRequest(task_id=task_id)
        )
        assert [c.id for c in listed.configs] != ["sdk-1"] and len(listed.configs) == 1, listed
        try:
            await plain.get_task_push_notification_config(
                GetTaskPushNotificationConfigRequest(task_id=task_id, id="sdk-1")
            )
            raise AssertionError("a deleted push config was found")
        except TaskNotFoundError:
            pass
    finally:
        receiver.stop()


async def check_binding(api: httpx.AsyncClient, card, binding: str) -> None:
    async with httpx.AsyncClient(headers=api.headers, timeout=30.0) as http:
        await check_on(http, api, card, binding)


async def check_on(http, api, card, binding: str) -> None:
    plain = ClientFactory(
        ClientConfig(httpx_client=http, streaming=False, supported_protocol_bindings=[binding])
    ).create(card)
    streaming = ClientFactory(
        ClientConfig(httpx_client=http, streaming=True, supported_protocol_bindings=[binding])
    ).create(card)

    # Send, read, list.
    task_id = await send(plain, f"Fix the flaky test ({binding})\nIt fails one run in ten.")
    task = await plain.get_task(GetTaskRequest(id=task_id, history_length=10))
    assert task.id == task_id and len(task.history) == 1, task
    assert task.history[0].parts[0].text.startswith("Fix the flaky test"), task
    listed = await plain.list_tasks(ListTasksRequest(page_size=100))
    assert task_id in [t.id for t in listed.tasks], listed
    assert listed.total_size >= 1, listed
    submitted = await plain.list_tasks(
        ListTasksRequest(status=TaskState.TASK_STATE_SUBMITTED, page_size=100)
    )
    assert task_id in [t.id for t in submitted.tasks], submitted

    # A message naming the task is a comment on it.
    reply = message("Any news?")
    reply.task_id = task_id
    events = [e async for e in plain.send_message(SendMessageRequest(message=reply))]
    assert [m.parts[0].text for m in events[0].task.history][-1] == "Any news?", events

    # Stream a new task while Muster's people work on it: the task first, then its
    # states, ending when it completes.
    seen = []

    async def follow():
        async for event in streaming.send_message(SendMessageRequest(message=message("Stream me"))):
            if event.HasField("task"):
                seen.append(("task", event.task.id, state(event.task.status)))
            elif event.HasField("status_update"):
                seen.append(("update", event.status_update.task_id, state(event.status_update.status)))

    follower = asyncio.create_task(follow())
    for _ in range(100):
        if seen:
            break
        await asyncio.sleep(0.05)
    assert seen and seen[0][0] == "task", seen
    streamed = seen[0][1]
    await transition(api, streamed, "in_progress")
    await transition(api, streamed, "done")
    await asyncio.wait_for(follower, 30)
    states = [s for (_, _, s) in seen]
    assert states[0] == "TASK_STATE_SUBMITTED" and states[-1] == "TASK_STATE_COMPLETED", seen
    assert "TASK_STATE_WORKING" in states, seen

    # Subscribe to a task; canceling it ends the subscription.
    watched = await send(plain, "Watch me")
    updates = []

    async def subscribe():
        async for event in streaming.subscribe(SubscribeToTaskRequest(id=watched)):
            updates.append(event)

    subscriber = asyncio.create_task(subscribe())
    for _ in range(100):
        if updates:
            break
        await asyncio.sleep(0.05)
    assert updates and updates[0].HasField("task"), updates
    canceled = await plain.cancel_task(CancelTaskRequest(id=watched))
    assert state(canceled.status) == "TASK_STATE_CANCELED", canceled
    await asyncio.wait_for(subscriber, 30)
    assert state(updates[-1].status_update.status) == "TASK_STATE_CANCELED", updates

    # The protocol's errors arrive as the SDK's typed errors.
    try:
        await plain.cancel_task(CancelTaskRequest(id=watched))
        raise AssertionError("a canceled task was canceled again")
    except TaskNotCancelableError:
        pass
    try:
        await plain.get_task(GetTaskRequest(id=str(uuid.uuid4())))
        raise AssertionError("an unknown task was found")
    except TaskNotFoundError:
        pass
    # A stream's error too (over JSON-RPC, the stream's one `error` event).
    try:
        async for event in streaming.subscribe(SubscribeToTaskRequest(id=str(uuid.uuid4()))):
            raise AssertionError(f"an unknown task was streamed: {event}")
        raise AssertionError("subscribing to an unknown task ended without an error")
    except TaskNotFoundError:
        pass

    await check_push(api, plain, binding)

    await plain.close()
    await streaming.close()
    print(
        f"a2a-sdk over {binding}: send, get, list, reply, stream, subscribe, cancel, "
        "push configs and pushes: OK"
    )


async def main() -> None:
    headers = {"Authorization": f"Bearer {KEY}"}
    async with httpx.AsyncClient(headers=headers, timeout=30.0) as api:
        card = await validate_card(api)
        print("a2a-sdk: the Agent Card validates against the A2A 1.0 schema")
        for binding in ["JSONRPC", "HTTP+JSON"]:
            await check_binding(api, card, binding)


if __name__ == "__main__":
    asyncio.run(main())
