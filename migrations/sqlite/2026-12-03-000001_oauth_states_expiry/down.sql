DROP INDEX oauth_states_expiry;
