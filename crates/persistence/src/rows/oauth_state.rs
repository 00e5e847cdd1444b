use diesel::prelude::*;
use muster_domain::model::{BearerSecret, OAuthState};
use muster_domain::ports::RepositoryError;

use crate::rows::token_hash;
use crate::schema::oauth_states;
use crate::types::DbTime;

#[derive(Debug, Clone, Queryable, Selectable, Insertable)]
#[diesel(table_name = oauth_states, check_for_backend(diesel::pg::Pg, diesel::sqlite::Sqlite))]
pub(crate) struct OAuthStateRow {
    pub state_hash: Vec<u8>,
    pub code_verifier: String,
    pub created_at: DbTime,
    pub expires_at: DbTime,
}

impl From<&OAuthState> for OAuthStateRow {
    fn from(state: &OAuthState) -> Self {
        Self {
            state_hash: state.state_hash.0.to_vec(),
            code_verifier: state.code_verifier.expose().to_owned(),
            created_at: DbTime(state.created_at),
            expires_at: DbTime(state.expires_at),
        }
    }
}

impl TryFrom<OAuthStateRow> for OAuthState {
    type Error = RepositoryError;

    fn try_from(row: OAuthStateRow) -> Result<Self, Self::Error> {
        Ok(Self {
            state_hash: token_hash("OAuth state hash", &row.state_hash)?,
            code_verifier: BearerSecret::new(row.code_verifier),
            created_at: row.created_at.0,
            expires_at: row.expires_at.0,
        })
    }
}
