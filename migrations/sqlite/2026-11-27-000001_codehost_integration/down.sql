DROP TABLE codehost_deliveries;
DROP TABLE codehost_links;
DROP TABLE codehost_connections;
