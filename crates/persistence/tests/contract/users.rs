//! `UserRepository` reads of users and the user `Transaction` methods: `user`,
//! `user_by_email` (both locked), `update_user`, and the default organization.

use crate::support::Store;
use crate::writes::Writes;
use muster_domain::model::{Email, OrgId, User, UserId};
use muster_domain::ports::{Lock, UniqueKey, UserRepository, transact};
use muster_domain::service::{Conflict, ServiceError};
use time::Duration;

use crate::support::credentials::{changed_user, full_user};
use crate::support::{new_id, now_ms, seed_org};

contract_tests!(
    every_user_field_round_trips_through_update_user,
    a_new_user_reads_back_with_its_defaults,
    update_user_to_a_taken_email_is_a_duplicate,
    update_user_of_an_unknown_user_is_false,
    users_are_scoped_to_their_organization,
    default_organization_is_the_default_one,
);

/// The user `id` of `org` read every way there is: through the repository by id and by
/// e-mail, and inside a transaction with either lock. All four must agree.
async fn read_back(db: &impl Store, org: OrgId, id: UserId, email: &Email) -> Option<User> {
    let by_id = UserRepository::user(db, org, id).await.unwrap();
    let by_email = db.user_by_email(org, email).await.unwrap();
    let email = email.clone();
    let (locked_by_id, locked_by_email) = transact(db, move |tx| {
        Box::pin(async move {
            let by_id = tx.user(org, id, Lock::Update).await?;
            let by_email = tx.user_by_email(org, &email, Lock::Share).await?;
            Ok((by_id, by_email))
        })
    })
    .await
    .unwrap();
    assert_eq!(by_id, locked_by_id, "locked read by id");
    if by_id.is_some() {
        assert_eq!(by_id, by_email, "read by e-mail");
        assert_eq!(by_id, locked_by_email, "locked read by e-mail");
    }
    by_id
}

async fn every_user_field_round_trips_through_update_user(db: &impl Store) {
    let seed = seed_org(db).await;
    let user = full_user(seed.org);
    db.insert_user(&user).await.unwrap();
    assert_eq!(
        read_back(db, seed.org, user.id, &user.email).await,
        Some(user.clone())
    );

    // Every mutable field changes, the optional ones to empty.
    let changed = changed_user(&user);
    assert!(db.update_user(&changed, now_ms()).await.unwrap());
    assert_eq!(
        read_back(db, seed.org, user.id, &changed.email).await,
        Some(changed.clone())
    );
    assert_eq!(db.user_by_email(seed.org, &user.email).await.unwrap(), None);

    // And back to set: the optional fields are written, not only cleared.
    let again = User {
        email: changed.email.clone(),
        ..full_user(seed.org)
    };
    let again = User {
        id: user.id,
        created_at: user.created_at,
        ..again
    };
    assert!(db.update_user(&again, now_ms()).await.unwrap());
    assert_eq!(
        read_back(db, seed.org, user.id, &again.email).await,
        Some(again)
    );
}

/// A user as bootstrap creates it: no second factor, never logged in.
async fn a_new_user_reads_back_with_its_defaults(db: &impl Store) {
    let seed = seed_org(db).await;
    let admin = &seed.new.admin;
    let stored = read_back(db, seed.org, admin.id, &admin.email).await;
    assert_eq!(stored.as_ref(), Some(admin));
    let stored = stored.unwrap();
    assert!(!stored.email_verified && !stored.totp.enabled);
    assert_eq!(stored.totp.secret, None);
    assert_eq!(stored.last_login_at, None);
}

async fn update_user_to_a_taken_email_is_a_duplicate(db: &impl Store) {
    let seed = seed_org(db).await;
    let first = full_user(seed.org);
    let second = full_user(seed.org);
    db.insert_user(&first).await.unwrap();
    db.insert_user(&second).await.unwrap();

    let taken = User {
        email: first.email.clone(),
        ..changed_user(&second)
    };
    let err = db
        .update_user(&taken, now_ms())
        .await
        .expect_err("a taken e-mail must be refused");
    assert!(
        matches!(
            err,
            ServiceError::Conflict(Conflict::Duplicate(UniqueKey::UserEmail))
        ),
        "got {err:?}"
    );
    assert_eq!(
        UserRepository::user(db, seed.org, second.id).await.unwrap(),
        Some(second.clone())
    );

    // E-mails are unique per organization only.
    let other = seed_org(db).await;
    let elsewhere = User {
        email: first.email.clone(),
        ..full_user(other.org)
    };
    db.insert_user(&elsewhere).await.unwrap();
    let err = db
        .insert_user(&User {
            email: first.email.clone(),
            ..full_user(seed.org)
        })
        .await
        .expect_err("a taken e-mail must be refused on insert too");
    assert!(
        matches!(
            err,
            ServiceError::Conflict(Conflict::Duplicate(UniqueKey::UserEmail))
        ),
        "got {err:?}"
    );
}

async fn update_user_of_an_unknown_user_is_false(db: &impl Store) {
    let seed = seed_org(db).await;
    let never_stored = full_user(seed.org);
    assert!(!db.update_user(&never_stored, now_ms()).await.unwrap());

    // The admin's id, but in another organization: not that user.
    let admin = &seed.new.admin;
    let wrong_org = User {
        org_id: OrgId::from_uuid(new_id()),
        ..changed_user(admin)
    };
    assert!(!db.update_user(&wrong_org, now_ms()).await.unwrap());
    assert_eq!(
        UserRepository::user(db, seed.org, admin.id).await.unwrap(),
        Some(admin.clone())
    );
}

async fn users_are_scoped_to_their_organization(db: &impl Store) {
    let seed = seed_org(db).await;
    let other = seed_org(db).await;
    let admin = &seed.new.admin;
    assert_eq!(read_back(db, other.org, admin.id, &admin.email).await, None);
    assert_eq!(
        UserRepository::user(db, seed.org, UserId::from_uuid(new_id()))
            .await
            .unwrap(),
        None
    );
    let unknown = Email::new("nobody@example.com").unwrap();
    assert_eq!(db.user_by_email(seed.org, &unknown).await.unwrap(), None);
    // Rewriting a user unchanged, later, leaves it as it was.
    let later = now_ms() + Duration::days(1);
    assert!(db.update_user(admin, later).await.unwrap());
    assert_eq!(
        UserRepository::user(db, seed.org, admin.id).await.unwrap(),
        Some(admin.clone())
    );
}

async fn default_organization_is_the_default_one<S: Store>(db: &S) {
    let in_tx = |db: &S| {
        let db = db.clone();
        async move {
            transact(&db, |tx| {
                Box::pin(async move { Ok(tx.default_organization().await?) })
            })
            .await
            .unwrap()
        }
    };
    assert_eq!(db.default_organization().await.unwrap(), None);
    assert_eq!(in_tx(db).await, None);

    let first = seed_org(db).await;
    let second = seed_org(db).await;
    assert!(!second.new.organization.is_default);
    let expected = Some(first.new.organization);
    assert_eq!(db.default_organization().await.unwrap(), expected);
    assert_eq!(in_tx(db).await, expected);
}
