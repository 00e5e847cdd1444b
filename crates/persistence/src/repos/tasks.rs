use async_trait::async_trait;
use muster_domain::model::{OrgId, Task, TaskId};
use muster_domain::ports::{RepositoryError, TaskFilter, TaskRepository};

use crate::Database;
use crate::error::from_diesel;
use crate::queries::tasks;

#[async_trait]
impl TaskRepository for Database {
    async fn get(&self, org: OrgId, id: TaskId) -> Result<Option<Task>, RepositoryError> {
        let mut pooled = self.pooled().await?;
        let row = tasks::find(&mut pooled.conn(), org, id, None)
            .await
            .map_err(from_diesel)?;
        row.map(Task::try_from).transpose()
    }

    async fn list(
        &self,
        org: OrgId,
        filter: &TaskFilter,
        before: Option<TaskId>,
        limit: u32,
    ) -> Result<Vec<Task>, RepositoryError> {
        let mut pooled = self.pooled().await?;
        let rows = tasks::list(&mut pooled.conn(), org, filter, before, limit)
            .await
            .map_err(from_diesel)?;
        rows.into_iter().map(Task::try_from).collect()
    }
}
