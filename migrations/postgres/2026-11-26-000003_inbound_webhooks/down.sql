DROP TABLE inbound_webhook_keys;
