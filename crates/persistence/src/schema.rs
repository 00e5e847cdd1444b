//! The one hand-written schema for both engines. A contract test selects every row type
//! from every table on each engine, so drift from the migrations fails CI.

// `table!` blocks conventionally glob-import the SQL types they name.
#![allow(clippy::wildcard_imports)]

use diesel::{allow_tables_to_appear_in_same_query, joinable};

diesel::table! {
    use diesel::sql_types::*;
    use crate::types::PortableTimestamp;
    use crate::types::PortableUuid;

    organizations (id) {
        id -> PortableUuid,
        name -> Text,
        is_default -> Bool,
        created_at -> PortableTimestamp,
        guard_actions_per_minute -> Nullable<Integer>,
        guard_credits_per_hour -> Nullable<BigInt>,
    }
}

diesel::table! {
    use diesel::sql_types::*;
    use crate::types::PortableTimestamp;
    use crate::types::PortableUuid;

    users (id) {
        id -> PortableUuid,
        org_id -> PortableUuid,
        email -> Text,
        name -> Text,
        role -> Text,
        password_hash -> Text,
        created_at -> PortableTimestamp,
        updated_at -> PortableTimestamp,
        email_verified -> Bool,
        totp_enabled -> Bool,
        totp_secret -> Nullable<Binary>,
        totp_pending_secret -> Nullable<Binary>,
        totp_last_step -> Nullable<BigInt>,
        last_login_at -> Nullable<PortableTimestamp>,
    }
}

diesel::table! {
    use diesel::sql_types::*;
    use crate::types::{PortableJson, PortableTimestamp, PortableUuid};

    agents (id) {
        id -> PortableUuid,
        org_id -> PortableUuid,
        agent_id -> Text,
        name -> Text,
        level -> Integer,
        model -> Nullable<Text>,
        role -> Text,
        mode -> Text,
        status -> Text,
        parent_id -> Nullable<PortableUuid>,
        current_balance -> BigInt,
        budget_period_limit -> Nullable<BigInt>,
        budget_period_spent -> BigInt,
        budget_period_start -> PortableTimestamp,
        management_fee_pct -> Integer,
        reputation_score -> Integer,
        metadata -> PortableJson,
        encrypted_secret -> Binary,
        created_at -> PortableTimestamp,
        updated_at -> PortableTimestamp,
        guard_actions -> Integer,
        guard_actions_since -> Nullable<PortableTimestamp>,
        guard_credits -> BigInt,
        guard_credits_since -> Nullable<PortableTimestamp>,
        reserved_credits -> BigInt,
        budget_exhausted -> Bool,
    }
}

diesel::table! {
    use diesel::sql_types::*;
    use crate::types::{PortableJson, PortableTimestamp, PortableUuid};

    tasks (id) {
        id -> PortableUuid,
        org_id -> PortableUuid,
        title -> Text,
        description -> Nullable<Text>,
        status -> Text,
        priority -> Text,
        assignee_id -> Nullable<PortableUuid>,
        creator_id -> Nullable<PortableUuid>,
        parent_task_id -> Nullable<PortableUuid>,
        approval_required -> Bool,
        due_at -> Nullable<PortableTimestamp>,
        tags -> PortableJson,
        metadata -> PortableJson,
        created_at -> PortableTimestamp,
        updated_at -> PortableTimestamp,
        version -> BigInt,
        creator_user_id -> Nullable<PortableUuid>,
        approved_by -> Nullable<PortableUuid>,
        approved_at -> Nullable<PortableTimestamp>,
        status_changed_at -> Nullable<PortableTimestamp>,
        last_activity_at -> Nullable<PortableTimestamp>,
        lease_expires_at -> Nullable<PortableTimestamp>,
        result -> Nullable<Text>,
        outcome -> Nullable<Text>,
        reward -> BigInt,
        reward_payer_agent_id -> Nullable<PortableUuid>,
        project_id -> Nullable<PortableUuid>,
    }
}

diesel::table! {
    use diesel::sql_types::*;
    use crate::types::{PortableJson, PortableTimestamp, PortableUuid};

    events (id) {
        id -> PortableUuid,
        org_id -> PortableUuid,
        #[sql_name = "type"]
        event_type -> Text,
        actor_id -> Nullable<PortableUuid>,
        entity_type -> Text,
        entity_id -> PortableUuid,
        severity -> Text,
        payload -> PortableJson,
        created_at -> PortableTimestamp,
    }
}

diesel::table! {
    use diesel::sql_types::*;
    use crate::types::{PortableTimestamp, PortableUuid};

    nonces (agent_id, nonce) {
        agent_id -> PortableUuid,
        nonce -> Text,
        expires_at -> PortableTimestamp,
    }
}

diesel::table! {
    use diesel::sql_types::*;
    use crate::types::{PortableTimestamp, PortableUuid};

    refresh_tokens (id) {
        id -> PortableUuid,
        org_id -> PortableUuid,
        user_id -> PortableUuid,
        family_id -> PortableUuid,
        token_hash -> Binary,
        created_at -> PortableTimestamp,
        expires_at -> PortableTimestamp,
        replaced_at -> Nullable<PortableTimestamp>,
        revoked_at -> Nullable<PortableTimestamp>,
    }
}

diesel::table! {
    use diesel::sql_types::*;
    use crate::types::{PortableTimestamp, PortableUuid};

    recovery_codes (user_id, code_hash) {
        user_id -> PortableUuid,
        code_hash -> Binary,
        used_at -> Nullable<PortableTimestamp>,
    }
}

diesel::table! {
    use diesel::sql_types::*;
    use crate::types::{PortableJson, PortableTimestamp, PortableUuid};

    api_keys (id) {
        id -> PortableUuid,
        org_id -> PortableUuid,
        user_id -> PortableUuid,
        name -> Text,
        key_prefix -> Text,
        key_hash -> Binary,
        scopes -> PortableJson,
        last_used_at -> Nullable<PortableTimestamp>,
        expires_at -> Nullable<PortableTimestamp>,
        created_at -> PortableTimestamp,
    }
}

diesel::table! {
    use diesel::sql_types::*;
    use crate::types::PortableTimestamp;

    oauth_states (state_hash) {
        state_hash -> Binary,
        code_verifier -> Text,
        created_at -> PortableTimestamp,
        expires_at -> PortableTimestamp,
    }
}

diesel::table! {
    use diesel::sql_types::*;
    use crate::types::PortableTimestamp;

    login_throttles (key_hash) {
        key_hash -> Binary,
        failures -> Integer,
        last_failure_at -> PortableTimestamp,
    }
}

diesel::table! {
    use diesel::sql_types::*;
    use crate::types::{PortableTimestamp, PortableUuid};

    task_dependencies (id) {
        id -> PortableUuid,
        org_id -> PortableUuid,
        task_id -> PortableUuid,
        depends_on_id -> PortableUuid,
        blocking -> Bool,
        created_at -> PortableTimestamp,
    }
}

diesel::table! {
    use diesel::sql_types::*;
    use crate::types::{PortableTimestamp, PortableUuid};

    task_comments (id) {
        id -> PortableUuid,
        org_id -> PortableUuid,
        task_id -> PortableUuid,
        agent_id -> Nullable<PortableUuid>,
        user_id -> Nullable<PortableUuid>,
        parent_comment_id -> Nullable<PortableUuid>,
        body -> Text,
        created_at -> PortableTimestamp,
    }
}

diesel::table! {
    use diesel::sql_types::*;
    use crate::types::{PortableTimestamp, PortableUuid};

    escalations (id) {
        id -> PortableUuid,
        org_id -> PortableUuid,
        task_id -> PortableUuid,
        reason -> Text,
        notes -> Nullable<Text>,
        from_agent_id -> Nullable<PortableUuid>,
        to_agent_id -> Nullable<PortableUuid>,
        actor_id -> Nullable<PortableUuid>,
        automatic -> Bool,
        created_at -> PortableTimestamp,
    }
}

diesel::table! {
    use diesel::sql_types::*;
    use crate::types::{PortableJson, PortableTimestamp, PortableUuid};

    task_templates (id) {
        id -> PortableUuid,
        org_id -> PortableUuid,
        name -> Text,
        name_key -> Text,
        title -> Text,
        description -> Nullable<Text>,
        priority -> Text,
        tags -> PortableJson,
        approval_required -> Bool,
        metadata -> PortableJson,
        created_from_task_id -> Nullable<PortableUuid>,
        created_at -> PortableTimestamp,
    }
}

diesel::table! {
    use diesel::sql_types::*;
    use crate::types::{PortableTimestamp, PortableUuid};

    agent_capabilities (id) {
        id -> PortableUuid,
        org_id -> PortableUuid,
        agent_id -> PortableUuid,
        capability -> Text,
        proficiency -> Text,
        created_at -> PortableTimestamp,
    }
}

diesel::table! {
    use diesel::sql_types::*;
    use crate::types::{PortableTimestamp, PortableUuid};

    credit_ledger (id) {
        id -> PortableUuid,
        org_id -> PortableUuid,
        agent_id -> PortableUuid,
        kind -> Text,
        amount -> BigInt,
        balance_after -> BigInt,
        reason -> Nullable<Text>,
        task_id -> Nullable<PortableUuid>,
        counterparty_id -> Nullable<PortableUuid>,
        created_at -> PortableTimestamp,
    }
}

diesel::table! {
    use diesel::sql_types::*;
    use crate::types::{PortableTimestamp, PortableUuid};

    treasuries (org_id) {
        org_id -> PortableUuid,
        balance -> BigInt,
        updated_at -> Nullable<PortableTimestamp>,
    }
}

diesel::table! {
    use diesel::sql_types::*;
    use crate::types::{PortableTimestamp, PortableUuid};

    treasury_entries (id) {
        id -> PortableUuid,
        org_id -> PortableUuid,
        kind -> Text,
        amount -> BigInt,
        balance_after -> BigInt,
        reason -> Nullable<Text>,
        task_id -> Nullable<PortableUuid>,
        actor_id -> Nullable<PortableUuid>,
        created_at -> PortableTimestamp,
    }
}

diesel::table! {
    use diesel::sql_types::*;
    use crate::types::{PortableTimestamp, PortableUuid};

    reputation_events (id) {
        id -> PortableUuid,
        org_id -> PortableUuid,
        agent_id -> PortableUuid,
        kind -> Text,
        amount -> Integer,
        reason -> Text,
        task_id -> Nullable<PortableUuid>,
        created_at -> PortableTimestamp,
    }
}

diesel::table! {
    use diesel::sql_types::*;
    use crate::types::{PortableJson, PortableTimestamp, PortableUuid};

    webhooks (id) {
        id -> PortableUuid,
        org_id -> PortableUuid,
        name -> Text,
        url -> Text,
        sealed_secret -> Nullable<Binary>,
        events -> PortableJson,
        hook_type -> Text,
        can_block -> Bool,
        timeout_ms -> Integer,
        enabled -> Bool,
        consecutive_failures -> Integer,
        last_error -> Nullable<Text>,
        lease_holder -> Nullable<PortableUuid>,
        lease_until -> Nullable<PortableTimestamp>,
        created_at -> PortableTimestamp,
        updated_at -> PortableTimestamp,
        task_id -> Nullable<PortableUuid>,
        push_config_id -> Nullable<Text>,
        sealed_auth -> Nullable<Binary>,
        remote_agent_id -> Nullable<PortableUuid>,
        remote_card_url -> Nullable<Text>,
        remote_callback_url -> Nullable<Text>,
    }
}

diesel::table! {
    use diesel::sql_types::*;
    use crate::types::PortableUuid;

    webhook_subscriptions (webhook_id, event_type) {
        webhook_id -> PortableUuid,
        org_id -> PortableUuid,
        event_type -> Text,
    }
}

diesel::table! {
    use diesel::sql_types::*;
    use crate::types::{PortableTimestamp, PortableUuid};

    webhook_deliveries (webhook_id, event_id) {
        webhook_id -> PortableUuid,
        event_id -> PortableUuid,
        event_at -> PortableTimestamp,
        attempts -> Integer,
        next_attempt_at -> PortableTimestamp,
        trace_parent -> Nullable<Text>,
        trace_state -> Nullable<Text>,
    }
}

diesel::table! {
    use diesel::sql_types::*;
    use crate::types::{PortableTimestamp, PortableUuid};

    webhook_attempts (id) {
        id -> PortableUuid,
        org_id -> PortableUuid,
        webhook_id -> PortableUuid,
        event_id -> Nullable<PortableUuid>,
        event_type -> Text,
        delivery_id -> PortableUuid,
        attempt -> Integer,
        status_code -> Nullable<Integer>,
        duration_ms -> Integer,
        error -> Nullable<Text>,
        created_at -> PortableTimestamp,
    }
}

diesel::table! {
    use diesel::sql_types::*;
    use crate::types::{PortableJson, PortableTimestamp, PortableUuid};

    inbound_webhook_keys (id) {
        id -> PortableUuid,
        org_id -> PortableUuid,
        name -> Text,
        key -> Text,
        sealed_secret -> Binary,
        default_agent_id -> Nullable<PortableUuid>,
        default_priority -> Text,
        default_tags -> PortableJson,
        enabled -> Bool,
        last_used_at -> Nullable<PortableTimestamp>,
        created_at -> PortableTimestamp,
        updated_at -> PortableTimestamp,
    }
}

diesel::table! {
    use crate::types::{PortableTimestamp, PortableUuid};
    use diesel::sql_types::*;

    codehost_connections (id) {
        id -> PortableUuid,
        org_id -> PortableUuid,
        installation_id -> BigInt,
        name -> Text,
        repository -> Nullable<Text>,
        sealed_secret -> Binary,
        enabled -> Bool,
        created_at -> PortableTimestamp,
        updated_at -> PortableTimestamp,
    }
}

diesel::table! {
    use crate::types::{PortableTimestamp, PortableUuid};
    use diesel::sql_types::*;

    codehost_links (connection_id, repository, kind, number) {
        connection_id -> PortableUuid,
        repository -> Text,
        kind -> Text,
        number -> BigInt,
        task_id -> PortableUuid,
        linked_at -> PortableTimestamp,
    }
}

diesel::table! {
    use crate::types::{PortableTimestamp, PortableUuid};
    use diesel::sql_types::*;

    codehost_deliveries (connection_id, delivery_id) {
        connection_id -> PortableUuid,
        delivery_id -> Text,
        received_at -> PortableTimestamp,
        action -> Nullable<Text>,
        task_id -> Nullable<PortableUuid>,
        reason -> Nullable<Text>,
    }
}

diesel::table! {
    use crate::types::PortableTimestamp;
    use diesel::sql_types::*;

    idempotency_keys (scope, method, path, key) {
        scope -> Text,
        method -> Text,
        path -> Text,
        key -> Text,
        fingerprint -> Binary,
        status_code -> Nullable<Integer>,
        content_type -> Nullable<Text>,
        response_body -> Nullable<Binary>,
        created_at -> PortableTimestamp,
    }
}

diesel::table! {
    use diesel::sql_types::*;
    use crate::types::{PortableTimestamp, PortableUuid};

    runs (id) {
        id -> PortableUuid,
        org_id -> PortableUuid,
        task_id -> PortableUuid,
        agent_id -> PortableUuid,
        status -> Text,
        adapter -> Nullable<Text>,
        model -> Nullable<Text>,
        started_at -> PortableTimestamp,
        ended_at -> Nullable<PortableTimestamp>,
        exit_code -> Nullable<Integer>,
        summary -> Nullable<Text>,
        stop_requested -> Bool,
        stop_reason -> Nullable<Text>,
        usage -> Text,
        log_bytes -> BigInt,
        log_lines -> BigInt,
        log_truncated -> Bool,
        reserved_credits -> BigInt,
        credits_per_usd -> BigInt,
        trace_id -> Nullable<Text>,
    }
}

diesel::table! {
    use diesel::sql_types::*;
    use crate::types::{PortableTimestamp, PortableUuid};

    run_log_lines (run_id, seq) {
        org_id -> PortableUuid,
        run_id -> PortableUuid,
        seq -> BigInt,
        stream -> Text,
        text -> Text,
        created_at -> PortableTimestamp,
    }
}

diesel::table! {
    use diesel::sql_types::*;
    use crate::types::{PortableTimestamp, PortableUuid};

    usage_reports (id) {
        id -> PortableUuid,
        org_id -> PortableUuid,
        run_id -> PortableUuid,
        task_id -> PortableUuid,
        agent_id -> PortableUuid,
        model -> Text,
        provider -> Nullable<Text>,
        input_tokens -> BigInt,
        output_tokens -> BigInt,
        cache_read_tokens -> BigInt,
        cache_write_tokens -> BigInt,
        cost_microusd -> Nullable<BigInt>,
        credits -> BigInt,
        unfunded_credits -> BigInt,
        report_id -> Nullable<Text>,
        day -> Text,
        created_at -> PortableTimestamp,
    }
}

diesel::table! {
    use diesel::sql_types::*;
    use crate::types::{PortableTimestamp, PortableUuid};

    claim_reservations (task_id) {
        task_id -> PortableUuid,
        org_id -> PortableUuid,
        agent_id -> PortableUuid,
        credits -> BigInt,
        created_at -> PortableTimestamp,
    }
}

diesel::table! {
    use diesel::sql_types::*;
    use crate::types::{PortableTimestamp, PortableUuid};

    projects (id) {
        id -> PortableUuid,
        org_id -> PortableUuid,
        name -> Text,
        goal -> Nullable<Text>,
        description -> Nullable<Text>,
        due_at -> Nullable<PortableTimestamp>,
        status -> Text,
        creator_agent_id -> Nullable<PortableUuid>,
        creator_user_id -> Nullable<PortableUuid>,
        created_at -> PortableTimestamp,
        updated_at -> PortableTimestamp,
        archived_at -> Nullable<PortableTimestamp>,
        version -> BigInt,
    }
}

diesel::table! {
    use diesel::sql_types::*;
    use crate::types::{PortableTimestamp, PortableUuid};

    routines (id) {
        id -> PortableUuid,
        org_id -> PortableUuid,
        name -> Text,
        schedule -> Text,
        timezone -> Text,
        task -> Nullable<Text>,
        template_id -> Nullable<PortableUuid>,
        enabled -> Bool,
        catch_up -> Text,
        owner_agent_id -> Nullable<PortableUuid>,
        owner_user_id -> Nullable<PortableUuid>,
        next_run_at -> Nullable<PortableTimestamp>,
        last_run_at -> Nullable<PortableTimestamp>,
        last_task_id -> Nullable<PortableUuid>,
        last_error -> Nullable<Text>,
        paused_reason -> Nullable<Text>,
        created_at -> PortableTimestamp,
        updated_at -> PortableTimestamp,
        version -> BigInt,
    }
}

diesel::table! {
    use diesel::sql_types::*;
    use crate::types::{PortableTimestamp, PortableUuid};

    routine_firings (routine_id, due_at) {
        routine_id -> PortableUuid,
        org_id -> PortableUuid,
        due_at -> PortableTimestamp,
        task_id -> PortableUuid,
        fired_at -> PortableTimestamp,
    }
}

joinable!(users -> organizations (org_id));
joinable!(task_dependencies -> organizations (org_id));
joinable!(task_comments -> tasks (task_id));
joinable!(escalations -> tasks (task_id));
joinable!(agent_capabilities -> agents (agent_id));
joinable!(credit_ledger -> agents (agent_id));
joinable!(reputation_events -> agents (agent_id));
joinable!(tasks -> organizations (org_id));
joinable!(treasuries -> organizations (org_id));
joinable!(treasury_entries -> organizations (org_id));
joinable!(events -> organizations (org_id));
joinable!(webhook_subscriptions -> webhooks (webhook_id));
joinable!(webhook_deliveries -> webhooks (webhook_id));
joinable!(webhook_deliveries -> events (event_id));
joinable!(nonces -> agents (agent_id));
joinable!(refresh_tokens -> organizations (org_id));
joinable!(refresh_tokens -> users (user_id));
joinable!(recovery_codes -> users (user_id));
joinable!(api_keys -> organizations (org_id));
joinable!(api_keys -> users (user_id));

allow_tables_to_appear_in_same_query!(
    organizations,
    users,
    agents,
    tasks,
    events,
    nonces,
    refresh_tokens,
    recovery_codes,
    api_keys,
    oauth_states,
    task_dependencies,
    task_comments,
    escalations,
    task_templates,
    agent_capabilities,
    credit_ledger,
    treasuries,
    treasury_entries,
    reputation_events,
    webhooks,
    webhook_subscriptions,
    webhook_deliveries,
    webhook_attempts,
    inbound_webhook_keys,
    codehost_connections,
    codehost_links,
    codehost_deliveries,
    idempotency_keys,
    runs,
    run_log_lines,
    usage_reports,
    claim_reservations,
    projects,
    routines,
    routine_firings,
);
