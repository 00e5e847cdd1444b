//! Projects through MCP tools (issue 66): listed with schemas built from their routes, a
//! project's whole life through them with the answers the REST routes give, and refusals
//! as tool errors carrying the route's error body.

use serde_json::json;

use crate::helpers::{TestApp, str_of};
use crate::mcp::{call, names, tool};

api_tests!(
    the_project_tools_are_listed_with_their_routes_schemas,
    a_project_lives_through_tools,
    project_tools_refuse_as_the_routes_do,
);

async fn the_project_tools_are_listed_with_their_routes_schemas(app: &TestApp) {
    let listed = call(app, &app.org.hr, "tools/list", &json!({})).await;
    let seen = names(&listed);
    for name in [
        "list_projects",
        "get_project",
        "create_project",
        "update_project",
        "archive_project",
    ] {
        assert!(seen.iter().any(|n| n == name), "{name} in {seen:?}");
    }
    let create = listed["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == "create_project")
        .unwrap()["inputSchema"]
        .clone();
    assert_eq!(create["required"], json!(["name"]), "{create}");
    assert_eq!(create["additionalProperties"], false, "{create}");
    assert_eq!(create["properties"]["goal"]["maxLength"], 2000, "{create}");
    // An observer reads projects but is not offered the writing tools.
    let observer = app.add_agent(&app.org, "observer", "active").await;
    let seen = names(&call(app, &observer, "tools/list", &json!({})).await);
    assert!(seen.iter().any(|n| n == "get_project"), "{seen:?}");
    assert!(!seen.iter().any(|n| n == "create_project"), "{seen:?}");
}

async fn a_project_lives_through_tools(app: &TestApp) {
    let hr = &app.org.hr;
    let created = tool(app, hr, "create_project", json!({"name": "Through MCP"})).await;
    assert_eq!(created["isError"], false, "{created}");
    let id = str_of(&created["structuredContent"]["data"], "id");
    let task = tool(
        app,
        hr,
        "create_task",
        json!({"title": "in it", "projectId": id, "reward": 0}),
    )
    .await;
    assert_eq!(task["structuredContent"]["data"]["projectId"], id, "{task}");
    let read = tool(app, hr, "get_project", json!({"id": id})).await;
    let progress = &read["structuredContent"]["data"]["progress"];
    assert_eq!(progress["total"], 1, "{read}");
    assert_eq!(progress["byStatus"]["todo"], 1, "{read}");
    let edited = tool(
        app,
        hr,
        "update_project",
        json!({"id": id, "goal": "Done soon"}),
    )
    .await;
    assert_eq!(
        edited["structuredContent"]["data"]["goal"], "Done soon",
        "{edited}"
    );
    let listed = tool(app, hr, "list_tasks", json!({"projectId": id})).await;
    assert_eq!(
        listed["structuredContent"]["data"].as_array().map(Vec::len),
        Some(1),
        "{listed}"
    );
    let archived = tool(app, hr, "archive_project", json!({"id": id})).await;
    assert_eq!(archived["structuredContent"]["data"]["status"], "archived");
    let projects = tool(app, hr, "list_projects", json!({"status": "archived"})).await;
    assert_eq!(
        projects["structuredContent"]["data"][0]["id"], id,
        "{projects}"
    );
    // The REST route says the same.
    let rest = app.get(hr, &format!("/projects/{id}")).await;
    assert_eq!(rest.data()["status"], "archived");
    assert_eq!(rest.data()["goal"], "Done soon");
}

async fn project_tools_refuse_as_the_routes_do(app: &TestApp) {
    let hr = &app.org.hr;
    let theirs = tool(
        app,
        &app.other.hr,
        "create_project",
        json!({"name": "Theirs"}),
    )
    .await;
    let theirs = str_of(&theirs["structuredContent"]["data"], "id");
    let foreign = tool(app, hr, "get_project", json!({"id": theirs})).await;
    assert_eq!(foreign["isError"], true, "{foreign}");
    assert_eq!(foreign["structuredContent"]["code"], "project_not_found");
    assert_eq!(foreign["structuredContent"]["statusCode"], 404);
    let blank = tool(app, hr, "create_project", json!({"name": "  "})).await;
    assert_eq!(
        blank["structuredContent"]["code"], "validation_failed",
        "{blank}"
    );
    let extra = tool(
        app,
        hr,
        "get_project",
        json!({"id": theirs, "verbose": true}),
    )
    .await;
    assert_eq!(extra["isError"], true, "{extra}");
    let archived = tool(app, &app.other.hr, "archive_project", json!({"id": theirs})).await;
    assert_eq!(archived["isError"], false, "{archived}");
    let late = tool(
        app,
        &app.other.hr,
        "create_task",
        json!({"title": "late", "projectId": theirs}),
    )
    .await;
    assert_eq!(
        late["structuredContent"]["code"], "project_archived",
        "{late}"
    );
    assert!(app.get(hr, "/projects").await.list().is_empty());
}
