//! `POST /api/v1/webhooks/chat` (decisions D-86, D-100): a chat message creates a task,
//! marks one done, or is ignored, and says which. Off until a token is configured; every
//! request then carries it, and only authors mapped to an agent complete tasks.

use std::collections::HashMap;
use std::sync::Arc;

use serde_json::json;

use crate::model::{
    Actor, ActorKind, AgentId, AgentStatus, IntegrationAction, IntegrationAnswer, Metadata, OrgId,
    Reason, TaskId, TaskStatus,
};
use crate::ports::{AgentRepository, OrganizationRepository, TaskRepository};
use crate::rules::chat::{ChatCommand, parse};
use crate::rules::constant_time;
use crate::service::{NewTask, ServiceError, TaskService, Unauthorized};

/// The most open tasks a completion hint is matched against (the newest).
const HINT_CANDIDATES: u32 = 10_000;

/// A chat message as the platform sends it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChatMessage {
    /// The platform's message id.
    pub id: String,
    /// The channel it was posted in.
    pub channel_id: String,
    /// The author's platform id.
    pub author_id: String,
    /// Whether the author is a bot.
    pub bot: bool,
    /// The text.
    pub content: String,
}

/// The operator's chat settings. `Debug` never shows the token.
#[derive(Clone, Default, PartialEq, Eq)]
pub struct ChatSettings {
    /// Chat author ids and the agents they act as (`MUSTER_CHAT_AGENT_MAP`).
    pub agents: HashMap<String, AgentId>,
    /// The organization of unmapped authors (the deployment's default when `None`).
    pub default_org: Option<OrgId>,
    /// The token every request must carry in `X-Chat-Token` (`MUSTER_CHAT_TOKEN`).
    /// Without one (or with an empty one) the integration is off (decision D-100).
    pub token: Option<String>,
}

impl std::fmt::Debug for ChatSettings {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ChatSettings")
            .field("agents", &self.agents)
            .field("default_org", &self.default_org)
            .field("token", &self.token.as_ref().map(|_| "<redacted>"))
            .finish()
    }
}

impl ChatSettings {
    /// Whether the integration is on: a token is configured.
    pub fn is_on(&self) -> bool {
        self.token.as_deref().is_some_and(|t| !t.is_empty())
    }

    /// `Ok` only when a token is configured and `given` is it, byte for byte (compared
    /// in constant time). Fails closed: with no token configured nothing passes.
    pub fn check_token(&self, given: Option<&[u8]>) -> Result<ChatCaller, Unauthorized> {
        match (self.token.as_deref().filter(|t| !t.is_empty()), given) {
            (Some(token), Some(given)) if constant_time::eq(token.as_bytes(), given) => {
                Ok(ChatCaller(()))
            }
            _ => Err(Unauthorized::InvalidChatToken),
        }
    }
}

/// A request that carried the configured chat token: only
/// [`ChatService::check_token`] makes one, and [`ChatService::handle`] needs one, so no
/// message is handled without the token.
#[derive(Debug)]
pub struct ChatCaller(());

/// Why a completion from an unmapped author is ignored. It says nothing about the
/// hint: such an author could read no task, so the answer must not tell whether a title
/// exists.
pub const UNMAPPED_COMPLETION: &str = "only chat authors mapped to an agent may complete tasks";

/// Chat messages into task changes.
#[derive(Clone)]
pub struct ChatService {
    tasks: TaskService,
    task_reads: Arc<dyn TaskRepository>,
    agents: Arc<dyn AgentRepository>,
    orgs: Arc<dyn OrganizationRepository>,
    settings: ChatSettings,
}

impl std::fmt::Debug for ChatService {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ChatService").finish_non_exhaustive()
    }
}

impl ChatService {
    /// Wires the chat integration.
    pub fn new(
        tasks: TaskService,
        task_reads: Arc<dyn TaskRepository>,
        agents: Arc<dyn AgentRepository>,
        orgs: Arc<dyn OrganizationRepository>,
        settings: ChatSettings,
    ) -> Self {
        Self {
            tasks,
            task_reads,
            agents,
            orgs,
            settings,
        }
    }

    /// Whether the integration is on (a token is configured); off, its route answers
    /// as if it did not exist.
    pub fn is_on(&self) -> bool {
        self.settings.is_on()
    }

    /// The settings' token check (`X-Chat-Token`), before anything else of a request is
    /// read.
    pub fn check_token(&self, given: Option<&[u8]>) -> Result<ChatCaller, ServiceError> {
        Ok(self.settings.check_token(given)?)
    }

    /// Handles one message of a `caller` that carried the token: from a mapped author it
    /// acts as that agent in its organization; from anyone else (bots excepted: they are
    /// ignored) as the service in the default organization, which may create tasks but
    /// not complete them (decision D-100).
    pub async fn handle(
        &self,
        _caller: &ChatCaller,
        message: &ChatMessage,
    ) -> Result<IntegrationAnswer, ServiceError> {
        let actor = match self.actor_for(message).await? {
            Ok(actor) => actor,
            Err(reason) => return Ok(IntegrationAnswer::ignored(reason, None)),
        };
        let mapped = self.settings.agents.contains_key(&message.author_id);
        match parse(&message.content) {
            ChatCommand::Nothing(reason) => Ok(IntegrationAnswer::ignored(reason, None)),
            ChatCommand::Create { title, priority } => {
                let metadata = Metadata::new(json!({
                    "source": "chat",
                    "chatMessageId": message.id,
                    "chatChannelId": message.channel_id,
                    "chatAuthorId": message.author_id,
                }))?;
                let task = self
                    .tasks
                    .create(
                        &actor,
                        NewTask {
                            priority,
                            metadata,
                            ..NewTask::new(title)
                        },
                    )
                    .await?;
                Ok(IntegrationAnswer::done(IntegrationAction::Created, task.id))
            }
            // Checked before any title is looked at, so the answer is the same whatever
            // the hint names.
            ChatCommand::Complete { .. } if !mapped => {
                Ok(IntegrationAnswer::ignored(UNMAPPED_COMPLETION, None))
            }
            ChatCommand::Complete { hint } => self.complete(&actor, &hint).await,
        }
    }

    async fn complete(&self, actor: &Actor, hint: &str) -> Result<IntegrationAnswer, ServiceError> {
        let open = self
            .task_reads
            .open_titles(actor.org_id, HINT_CANDIDATES)
            .await?;
        let Some(task) = match_hint(&open, hint) else {
            return Ok(IntegrationAnswer::ignored(
                format!("no single open task matches \"{hint}\""),
                None,
            ));
        };
        let reason = Reason::new("completed from chat".to_owned())?;
        let moved = self
            .tasks
            .advance(actor, task, TaskStatus::Done, reason)
            .await?;
        Ok(match moved.held {
            None => IntegrationAnswer::done(IntegrationAction::Completed, task),
            Some(why) => IntegrationAnswer::ignored(why, Some(task)),
        })
    }

    /// The mapped agent (active, in its organization), or the service in the default
    /// organization; else why the message is ignored.
    async fn actor_for(
        &self,
        message: &ChatMessage,
    ) -> Result<Result<Actor, &'static str>, ServiceError> {
        if let Some(agent) = self.settings.agents.get(&message.author_id) {
            return Ok(match self.agents.anywhere(*agent).await? {
                Some(a) if a.status == AgentStatus::Active => Ok(Actor {
                    org_id: a.org_id,
                    kind: ActorKind::Agent {
                        id: a.id,
                        role: a.role,
                        mode: a.mode,
                        level: a.level,
                    },
                }),
                Some(_) => Err("the author's agent is not active"),
                None => Err("the author is mapped to an agent that does not exist"),
            });
        }
        if message.bot {
            return Ok(Err(
                "messages from bots are ignored unless the bot is mapped to an agent",
            ));
        }
        let org = match self.settings.default_org {
            Some(org) => Some(org),
            None => self.orgs.default_organization().await?.map(|o| o.id),
        };
        Ok(org
            .map(|org_id| Actor {
                org_id,
                kind: ActorKind::System,
            })
            .ok_or(
                "no organization to act in: the author is not mapped and there is no default \
                 organization",
            ))
    }
}

/// The task `hint` names among `open`: the one whose title equals it (ignoring case and
/// surrounding blanks), else the single one whose title contains it; several or none:
/// no task.
fn match_hint(open: &[(TaskId, String)], hint: &str) -> Option<TaskId> {
    let hint = hint.trim().to_lowercase();
    if hint.is_empty() {
        return None;
    }
    let exact: Vec<TaskId> = open
        .iter()
        .filter(|(_, title)| title.trim().to_lowercase() == hint)
        .map(|(id, _)| *id)
        .collect();
    if let [one] = exact.as_slice() {
        return Some(*one);
    }
    // Several exact matches all contain the hint too, so they end up ambiguous below.
    let containing: Vec<TaskId> = open
        .iter()
        .filter(|(_, title)| title.to_lowercase().contains(&hint))
        .map(|(id, _)| *id)
        .collect();
    match containing.as_slice() {
        [one] => Some(*one),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use uuid::Uuid;

    use super::*;

    fn id(n: u128) -> TaskId {
        TaskId::from_uuid(Uuid::from_u128(n))
    }

    #[test]
    fn debug_never_shows_the_token() {
        let settings = ChatSettings {
            token: Some("s3cret-chat-token-value".into()),
            ..ChatSettings::default()
        };
        let shown = format!("{settings:?}");
        assert!(!shown.contains("s3cret"), "{shown}");
        assert!(shown.contains("<redacted>"), "{shown}");
        assert!(format!("{:?}", ChatSettings::default()).contains("token: None"));
    }

    #[test]
    fn hints_match_an_exact_title_else_a_single_containing_one() {
        let open = vec![
            (id(1), "Fix login".to_owned()),
            (id(2), "Fix login page styles".to_owned()),
            (id(3), "Rotate API keys".to_owned()),
            (id(4), "Deploy Überweisung".to_owned()),
        ];
        assert_eq!(match_hint(&open, "fix LOGIN "), Some(id(1)), "exact wins");
        assert_eq!(match_hint(&open, "page styles"), Some(id(2)));
        assert_eq!(match_hint(&open, "rotate"), Some(id(3)));
        assert_eq!(
            match_hint(&open, "überweisung"),
            Some(id(4)),
            "unicode case"
        );
        assert_eq!(match_hint(&open, "fix"), None, "two contain it");
        assert_eq!(match_hint(&open, "nothing"), None);
        assert_eq!(match_hint(&open, "  "), None);
        let twins = vec![(id(1), "Same".to_owned()), (id(2), "same".to_owned())];
        assert_eq!(match_hint(&twins, "same"), None, "two exact: ambiguous");
    }
}
