//! `muster agent …`.

use muster_client::Client;
use muster_client::types::agents::{
    AgentResponse, CapabilityInput, ListAgentsQuery, RegisterRequest, SpawnRequest, WithSecret,
};

use crate::args::{AgentCommand, NewAgentArgs};
use crate::output::{self, clip, or_dash, wire};

pub async fn run(client: &Client, command: AgentCommand, json: bool) -> anyhow::Result<()> {
    match command {
        AgentCommand::List {
            status,
            limit,
            cursor,
        } => {
            let query = ListAgentsQuery {
                status,
                limit,
                cursor,
                ..ListAgentsQuery::default()
            };
            let page = client.list_agents(&query).await?;
            if json {
                return output::json(&page);
            }
            let rows: Vec<Vec<String>> = page
                .data
                .iter()
                .map(|a| {
                    vec![
                        a.id.to_string(),
                        a.agent_id.clone(),
                        wire(&a.status),
                        wire(&a.role),
                        wire(&a.mode),
                        a.level.to_string(),
                        clip(&a.name, 40),
                    ]
                })
                .collect();
            output::table(
                &["ID", "AGENT ID", "STATUS", "ROLE", "MODE", "LEVEL", "NAME"],
                &rows,
            );
            output::more(page.meta.as_ref());
            Ok(())
        }
        AgentCommand::Show { id } => {
            let agent = client.get_agent(id).await?;
            if json {
                return output::json(&agent);
            }
            show(&agent);
            Ok(())
        }
        AgentCommand::Register { agent, role } => {
            let (agent_id, name, level, model, mode, capabilities) = parts(agent);
            let body = RegisterRequest {
                agent_id,
                name,
                level,
                model,
                role,
                mode,
                capabilities,
                ..RegisterRequest::default()
            };
            created(&client.register_agent(&body).await?, json)
        }
        AgentCommand::Spawn { agent } => {
            let (agent_id, name, level, model, mode, capabilities) = parts(agent);
            let body = SpawnRequest {
                agent_id,
                name,
                level,
                model,
                mode,
                capabilities,
                ..SpawnRequest::default()
            };
            created(&client.spawn_agent(&body).await?, json)
        }
    }
}

type Parts = (
    String,
    String,
    Option<i64>,
    Option<String>,
    Option<muster_client::types::model::AgentMode>,
    Option<Vec<CapabilityInput>>,
);

fn parts(agent: NewAgentArgs) -> Parts {
    let capabilities: Vec<CapabilityInput> = agent
        .capabilities
        .into_iter()
        .map(|(capability, proficiency)| CapabilityInput {
            capability,
            proficiency,
        })
        .collect();
    (
        agent.agent_id,
        agent.name,
        agent.level,
        agent.model,
        agent.mode,
        (!capabilities.is_empty()).then_some(capabilities),
    )
}

/// A new agent and its secret, which is shown this once.
fn created(answer: &WithSecret, json: bool) -> anyhow::Result<()> {
    if json {
        return output::json(answer);
    }
    show(&answer.data);
    println!();
    println!("secret: {}", answer.secret);
    println!("{}", answer.message);
    Ok(())
}

fn show(agent: &AgentResponse) {
    output::fields(&[
        ("id", agent.id.to_string()),
        ("agent id", agent.agent_id.clone()),
        ("name", agent.name.clone()),
        ("status", wire(&agent.status)),
        ("role", wire(&agent.role)),
        ("mode", wire(&agent.mode)),
        ("level", agent.level.to_string()),
        ("model", or_dash(agent.model.clone())),
    ]);
}
