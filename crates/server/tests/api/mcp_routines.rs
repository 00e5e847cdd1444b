//! Routines through MCP tools (decision D-108): a routine's life through them, with the
//! answers the REST routes give, and a refusal as a tool error with the route's body.

use serde_json::json;

use crate::helpers::{TestApp, str_of};
use crate::mcp::tool;

api_tests!(a_routine_lives_through_tools);

async fn a_routine_lives_through_tools(app: &TestApp) {
    let hr = &app.org.hr;
    let created = tool(
        app,
        hr,
        "create_routine",
        json!({"name": "Nightly", "schedule": "0 2 * * *", "task": {"title": "Nightly audit"}}),
    )
    .await;
    assert_eq!(created["isError"], false, "{created}");
    let id = str_of(&created["structuredContent"]["data"], "id");
    let listed = tool(app, hr, "list_routines", json!({})).await;
    assert_eq!(listed["structuredContent"]["data"][0]["id"], id, "{listed}");
    let off = tool(
        app,
        hr,
        "update_routine",
        json!({"id": id, "enabled": false}),
    )
    .await;
    assert_eq!(off["structuredContent"]["data"]["enabled"], false, "{off}");
    let ran = tool(app, hr, "run_routine", json!({"id": id})).await;
    assert_eq!(
        ran["structuredContent"]["data"]["title"], "Nightly audit",
        "{ran}"
    );
    let read = tool(app, hr, "get_routine", json!({"id": id})).await;
    assert_eq!(
        read["structuredContent"]["data"]["lastTaskId"],
        ran["structuredContent"]["data"]["id"]
    );
    let bad = tool(
        app,
        hr,
        "create_routine",
        json!({"name": "x", "schedule": "soon", "task": {"title": "t"}}),
    )
    .await;
    assert_eq!(bad["isError"], true, "{bad}");
    assert_eq!(bad["structuredContent"]["code"], "validation_failed");
    let other = app.worker(&app.org).await;
    let refused = tool(app, &other, "delete_routine", json!({"id": id})).await;
    assert_eq!(
        refused["structuredContent"]["code"], "routine_owner_required",
        "{refused}"
    );
    let deleted = tool(app, hr, "delete_routine", json!({"id": id})).await;
    assert_eq!(deleted["structuredContent"]["deleted"], true, "{deleted}");
    let rest = app.get(hr, &format!("/routines/{id}")).await;
    assert_eq!(rest.status.as_u16(), 404);
}
