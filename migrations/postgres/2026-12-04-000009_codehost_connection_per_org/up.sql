-- An installation id is unique within an organization, not across the deployment: a
-- second organization may connect the same id, and an event goes to the connection
-- whose secret signed it. So nobody learns that another organization connected an id,
-- and nobody can take an id first to keep its owner out. The unique index also finds an
-- installation's connections.
ALTER TABLE codehost_connections DROP CONSTRAINT codehost_connections_installation_id_key;
ALTER TABLE codehost_connections
    ADD CONSTRAINT codehost_connections_installation_id_org_id_key UNIQUE (installation_id, org_id);
