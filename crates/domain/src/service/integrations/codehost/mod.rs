//! The code-host integration (decisions D-87, D-88): connections managed by admin users
//! ([`CodeHostService`]), and the signed events of their installations turned into task
//! changes ([`events`]).

mod effects;
mod events;

use std::sync::Arc;

pub use self::events::HostDelivery;
use crate::ValidationError;
use crate::model::{
    Actor, AuditEvent, CodeHostConnection, CodeHostConnectionChanged, CodeHostConnectionId, Event,
    EventId, HookName, InstallationId, RepositoryName,
};
use crate::policy;
use crate::ports::{
    Clock, CodeHostRepository, IdGenerator, Lock, MessageSigner, SecretVault, transact,
};
use crate::service::{Entity, NotFound, ServiceError, TaskService};

/// A connection to create, checked field by field.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewConnection {
    /// The code host's installation id.
    pub installation_id: InstallationId,
    /// What its owners call it.
    pub name: HookName,
    /// The one repository it listens to, if limited.
    pub repository: Option<RepositoryName>,
}

/// A connection with its webhook secret in the clear: the answer of create, the only
/// time the secret is shown.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IssuedConnection {
    /// The record.
    pub connection: CodeHostConnection,
    /// The secret to give the code host (64 lowercase hex characters).
    pub webhook_secret: String,
}

/// The ports [`CodeHostService`] works through.
#[derive(Clone)]
pub struct CodeHostPorts {
    /// The task use cases events drive.
    pub tasks: TaskService,
    /// Reads of connections.
    pub connections: Arc<dyn CodeHostRepository>,
    /// Changes.
    pub uow: Arc<dyn crate::ports::UnitOfWork>,
    /// Seals and opens webhook secrets, and draws new ones.
    pub vault: Arc<dyn SecretVault>,
    /// Checks event signatures.
    pub signer: Arc<dyn MessageSigner>,
    /// Time.
    pub clock: Arc<dyn Clock>,
    /// New ids.
    pub ids: Arc<dyn IdGenerator>,
}

impl std::fmt::Debug for CodeHostPorts {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CodeHostPorts").finish_non_exhaustive()
    }
}

/// Code-host connections and their events.
#[derive(Clone)]
pub struct CodeHostService {
    ports: CodeHostPorts,
}

impl std::fmt::Debug for CodeHostService {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CodeHostService").finish_non_exhaustive()
    }
}

impl CodeHostService {
    /// Wires the integration to its ports.
    pub fn new(ports: CodeHostPorts) -> Self {
        Self { ports }
    }

    /// Creates a connection, answered with its webhook secret, with
    /// `codehost_connection.created`. One connection per installation in an organization
    /// (409); another organization's connection of the same id is neither refused nor
    /// told of: events go to the connection whose secret signed them.
    pub async fn create(
        &self,
        actor: &Actor,
        new: NewConnection,
    ) -> Result<IssuedConnection, ServiceError> {
        policy::may_manage_codehost(actor)?;
        let now = self.ports.clock.now();
        let id = CodeHostConnectionId::from_uuid(self.ports.ids.new_id());
        let vault = &self.ports.vault;
        let secret = vault.random_hex(32).map_err(ServiceError::internal)?;
        let sealed_secret = vault
            .seal(CodeHostConnection::SECRET_PURPOSE, id.as_uuid(), &secret)
            .map_err(ServiceError::internal)?;
        let connection = CodeHostConnection {
            id,
            org_id: actor.org_id,
            installation_id: new.installation_id,
            name: new.name,
            repository: new.repository,
            sealed_secret,
            enabled: true,
            created_at: now,
            updated_at: now,
        };
        let event = self.event(
            actor,
            &connection,
            &AuditEvent::CodeHostConnectionCreated(changed(&connection)),
        );
        let connection = transact(self.ports.uow.as_ref(), move |tx| {
            Box::pin(async move {
                tx.insert_codehost_connection(&connection).await?;
                tx.append_events(&[event]).await?;
                Ok(connection)
            })
        })
        .await?;
        Ok(IssuedConnection {
            connection,
            webhook_secret: secret,
        })
    }

    /// The organization's connections, newest first.
    pub async fn list(&self, actor: &Actor) -> Result<Vec<CodeHostConnection>, ServiceError> {
        policy::may_manage_codehost(actor)?;
        Ok(self.ports.connections.list(actor.org_id).await?)
    }

    /// One connection of the organization.
    pub async fn get(
        &self,
        actor: &Actor,
        id: CodeHostConnectionId,
    ) -> Result<CodeHostConnection, ServiceError> {
        policy::may_manage_codehost(actor)?;
        self.ports
            .connections
            .get(actor.org_id, id)
            .await?
            .ok_or_else(|| NotFound::new(Entity::CodeHostConnection, id).into())
    }

    /// Switches a connection on or off, with `codehost_connection.updated`.
    pub async fn set_enabled(
        &self,
        actor: &Actor,
        id: CodeHostConnectionId,
        enabled: Option<bool>,
    ) -> Result<CodeHostConnection, ServiceError> {
        policy::may_manage_codehost(actor)?;
        let enabled =
            enabled.ok_or_else(|| ValidationError::new("the update must name enabled"))?;
        let (org, now, service, actor) = (
            actor.org_id,
            self.ports.clock.now(),
            self.clone(),
            actor.clone(),
        );
        transact(self.ports.uow.as_ref(), move |tx| {
            Box::pin(async move {
                let mut connection = tx
                    .codehost_connection(org, id, Lock::Update)
                    .await?
                    .ok_or(NotFound::new(Entity::CodeHostConnection, id))?;
                if connection.enabled == enabled {
                    return Ok(connection);
                }
                connection.enabled = enabled;
                connection.updated_at = now;
                tx.update_codehost_connection(&connection).await?;
                let what = AuditEvent::CodeHostConnectionUpdated(changed(&connection));
                tx.append_events(&[service.event(&actor, &connection, &what)])
                    .await?;
                Ok(connection)
            })
        })
        .await
    }

    /// Deletes a connection with its links, with `codehost_connection.deleted`. Its
    /// tasks stay.
    pub async fn delete(
        &self,
        actor: &Actor,
        id: CodeHostConnectionId,
    ) -> Result<(), ServiceError> {
        policy::may_manage_codehost(actor)?;
        let (org, service, actor) = (actor.org_id, self.clone(), actor.clone());
        transact(self.ports.uow.as_ref(), move |tx| {
            Box::pin(async move {
                let connection = tx
                    .codehost_connection(org, id, Lock::Update)
                    .await?
                    .ok_or(NotFound::new(Entity::CodeHostConnection, id))?;
                tx.delete_codehost_connection(org, id).await?;
                let what = AuditEvent::CodeHostConnectionDeleted(changed(&connection));
                tx.append_events(&[service.event(&actor, &connection, &what)])
                    .await?;
                Ok(())
            })
        })
        .await
    }

    fn event(&self, actor: &Actor, connection: &CodeHostConnection, what: &AuditEvent) -> Event {
        Event::record(
            EventId::from_uuid(self.ports.ids.new_id()),
            connection.org_id,
            actor.actor_id(),
            connection.id.as_uuid(),
            self.ports.clock.now(),
            what,
        )
    }
}

fn changed(connection: &CodeHostConnection) -> CodeHostConnectionChanged {
    CodeHostConnectionChanged {
        name: connection.name.as_str().to_owned(),
        installation_id: connection.installation_id.get(),
        repository: connection
            .repository
            .as_ref()
            .map(|r| r.as_str().to_owned()),
        enabled: connection.enabled,
    }
}
