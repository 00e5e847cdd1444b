//! `POST /api/v1/integrations/codehost/webhook`: one signed event of an installation,
//! checked (installation, signature, switch, repository) and applied once per
//! `X-Host-Delivery`.

use serde_json::Value;

use super::CodeHostService;
use super::effects::apply;
use crate::ValidationError;
use crate::model::{Actor, ActorKind, CodeHostConnection, IntegrationAnswer};
use crate::ports::transact;
use crate::rules::codehost::{HostEvent, installation_of, read};
use crate::rules::constant_time;
use crate::service::{ServiceError, Unauthorized};

/// Longest `X-Host-Delivery` value remembered.
pub const MAX_DELIVERY_ID_CHARS: usize = 200;

/// Why a `ping` that names no installation is ignored: there is no connection to check
/// it against and nothing to do (a code host sends it to see that the URL answers).
const UNROUTED_PING: &str = "the ping names no installation: nothing to check or do";

/// One event as the code host sends it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HostDelivery {
    /// `X-Host-Event`: the event's name.
    pub event: String,
    /// `X-Host-Delivery`: the code host's id of this delivery, the same on every
    /// redelivery.
    pub delivery: Option<String>,
    /// `X-Host-Signature-256`: `sha256=` and the hex HMAC-SHA256 of the body.
    pub signature: String,
    /// The raw body, exactly as received.
    pub body: Vec<u8>,
}

impl CodeHostService {
    /// Handles one event: the connections of its installation (404 when none), the one
    /// whose secret signed it (401 when none did), then, when that connection is on
    /// and covers the repository, its effect on tasks, in one transaction with the
    /// record of its delivery id, so that a redelivery (even a concurrent one) is
    /// answered the same without a second effect. A `ping` that names no installation
    /// is ignored.
    pub async fn receive(
        &self,
        delivery: &HostDelivery,
    ) -> Result<IntegrationAnswer, ServiceError> {
        let delivery_id = delivery_id(delivery.delivery.as_deref())?;
        let payload: Value = serde_json::from_slice(&delivery.body)
            .map_err(|err| ValidationError::new(format!("malformed JSON: {err}")))?;
        let installation = match installation_of(&payload) {
            Ok(installation) => installation,
            Err(_) if delivery.event == "ping" => {
                return Ok(IntegrationAnswer::ignored(UNROUTED_PING, None));
            }
            Err(err) => return Err(err.into()),
        };
        let connections = self.ports.connections.by_installation(installation).await?;
        if connections.is_empty() {
            return Err(ServiceError::UnknownInstallation(installation.get()));
        }
        let connection = self.signed_by(connections, &delivery.signature, &delivery.body)?;
        if !connection.enabled {
            return Ok(IntegrationAnswer::ignored(
                "the connection is disabled",
                None,
            ));
        }
        let event = match read(&delivery.event, &payload)? {
            HostEvent::Ignored(reason) => return Ok(IntegrationAnswer::ignored(reason, None)),
            event => event,
        };
        if let Some(repository) = repository_of(&event)
            && !connection.covers(repository)
        {
            return Ok(IntegrationAnswer::ignored(
                "the connection does not cover this repository",
                None,
            ));
        }
        let (tasks, now) = (self.ports.tasks.clone(), self.ports.clock.now());
        transact(self.ports.uow.as_ref(), move |tx| {
            Box::pin(async move {
                if let Some(id) = &delivery_id
                    && !tx.claim_codehost_delivery(connection.id, id, now).await?
                {
                    let earlier = tx.codehost_answer(connection.id, id).await?;
                    return Ok(earlier.unwrap_or_else(|| {
                        IntegrationAnswer::ignored("the delivery was handled already", None)
                    }));
                }
                let actor = Actor {
                    org_id: connection.org_id,
                    kind: ActorKind::System,
                };
                let answer = apply(&tasks, tx, &actor, &connection, event, now).await?;
                if let Some(id) = &delivery_id {
                    tx.record_codehost_answer(connection.id, id, &answer)
                        .await?;
                }
                Ok(answer)
            })
        })
        .await
    }

    /// The connection whose secret signed the body (`sha256=<hex>`, hex digits in
    /// either case, compared in constant time). Several organizations may connect the
    /// same installation id, but only the one that gave the code host its secret gets
    /// the events: a connection made by someone else never sees them. Every candidate
    /// is checked, so the time taken does not tell which one matched.
    fn signed_by(
        &self,
        connections: Vec<CodeHostConnection>,
        signature: &str,
        body: &[u8],
    ) -> Result<CodeHostConnection, ServiceError> {
        let given = signature
            .strip_prefix("sha256=")
            .map(str::to_ascii_lowercase)
            .unwrap_or_default();
        let mut signer = None;
        for connection in connections {
            let secret = self
                .ports
                .vault
                .open(
                    CodeHostConnection::SECRET_PURPOSE,
                    connection.id.as_uuid(),
                    &connection.sealed_secret,
                )
                .map_err(ServiceError::internal)?;
            let expected = self.ports.signer.sign_hex(secret.as_bytes(), body);
            if constant_time::eq(expected.as_bytes(), given.as_bytes()) && signer.is_none() {
                signer = Some(connection);
            }
        }
        signer.ok_or_else(|| Unauthorized::InvalidHostSignature.into())
    }
}

/// The delivery id to remember: none when the header is absent or blank.
fn delivery_id(given: Option<&str>) -> Result<Option<String>, ValidationError> {
    let Some(id) = given.map(str::trim).filter(|id| !id.is_empty()) else {
        return Ok(None);
    };
    if id.chars().count() > MAX_DELIVERY_ID_CHARS || id.chars().any(char::is_control) {
        return Err(ValidationError::new(format!(
            "X-Host-Delivery must be at most {MAX_DELIVERY_ID_CHARS} printable characters"
        )));
    }
    Ok(Some(id.to_owned()))
}

fn repository_of(event: &HostEvent) -> Option<&str> {
    match event {
        HostEvent::Opened(item) | HostEvent::Edited(item) | HostEvent::Reopened(item) => {
            Some(&item.at.repository)
        }
        HostEvent::Closed { item, .. } | HostEvent::Commented { item, .. } => {
            Some(&item.repository)
        }
        HostEvent::ChecksCompleted { repository, .. } => Some(repository),
        HostEvent::Ignored(_) => None,
    }
}
