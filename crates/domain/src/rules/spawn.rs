//! How many children an agent may spawn, and at which level (decision D-51).

use crate::ValidationError;
use crate::model::Level;

/// How many active and pending children an agent of `level` may have: L1-2 0, L3 2,
/// L4 3, L5 5, L6 8, L7 12, L8 20, L9 50, L10 100.
///
/// ```
/// use muster_domain::model::Level;
/// use muster_domain::rules::spawn::capacity;
/// assert_eq!(capacity(Level::new(3).unwrap()), 2);
/// assert_eq!(capacity(Level::MAX), 100);
/// ```
pub const fn capacity(level: Level) -> u32 {
    match level.get() {
        0..=2 => 0,
        3 => 2,
        4 => 3,
        5 => 5,
        6 => 8,
        7 => 12,
        8 => 20,
        9 => 50,
        _ => 100,
    }
}

/// The level a child asks for, checked against its parent's: strictly below it and at
/// least 1. `None` asks for the default, the level just below the parent's (`None` when
/// the parent is at level 1, which has no room for children anyway).
pub fn child_level(
    parent: Level,
    requested: Option<i64>,
) -> Result<Option<Level>, ValidationError> {
    let Some(requested) = requested else {
        return Ok(parent.below());
    };
    let level = Level::new(requested)?;
    if level >= parent {
        return Err(ValidationError::new(format!(
            "level must be below the parent's level ({})",
            parent.get()
        )));
    }
    Ok(Some(level))
}

/// Why a spawn is refused for capacity: the sentence of the 409 and of
/// `GET /agents/capacity`.
pub fn capacity_reached(current: u32, max: u32) -> String {
    format!("Spawn capacity reached ({current}/{max})")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn level(n: i64) -> Level {
        Level::new(n).unwrap()
    }

    #[test]
    fn capacity_table_of_d51() {
        let table: Vec<u32> = (1..=10).map(|n| capacity(level(n))).collect();
        assert_eq!(table, [0, 0, 2, 3, 5, 8, 12, 20, 50, 100]);
    }

    #[test]
    fn child_levels_stay_below_the_parent() {
        assert_eq!(child_level(level(5), None).unwrap(), Some(level(4)));
        assert_eq!(child_level(level(1), None).unwrap(), None);
        assert_eq!(child_level(level(5), Some(1)).unwrap(), Some(level(1)));
        assert_eq!(
            child_level(level(5), Some(5)).unwrap_err().message(),
            "level must be below the parent's level (5)"
        );
        assert!(child_level(level(5), Some(6)).is_err());
        assert_eq!(
            child_level(level(5), Some(0)).unwrap_err().message(),
            "level must be between 1 and 10"
        );
    }

    #[test]
    fn capacity_message() {
        assert_eq!(capacity_reached(2, 2), "Spawn capacity reached (2/2)");
    }
}
