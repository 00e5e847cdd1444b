-- Fails while two organizations connect the same installation id.
ALTER TABLE codehost_connections DROP CONSTRAINT codehost_connections_installation_id_org_id_key;
ALTER TABLE codehost_connections
    ADD CONSTRAINT codehost_connections_installation_id_key UNIQUE (installation_id);
