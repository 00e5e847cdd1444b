//! Keyset paging of the lists the contract leaves unpaged (decision D-7).

use crate::ValidationError;

/// Which page of a list to read: up to `limit` items after `cursor`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PageRequest<C> {
    /// The `nextCursor` of the previous page; `None` for the first.
    pub cursor: Option<C>,
    /// Page size, 1..=[`MAX_LIMIT`](Self::MAX_LIMIT).
    pub limit: u32,
}

impl<C> PageRequest<C> {
    /// Page size when none is asked for.
    pub const DEFAULT_LIMIT: u32 = 100;
    /// Largest page size.
    pub const MAX_LIMIT: u32 = 500;

    /// The first page of the default size.
    pub const fn first() -> Self {
        Self {
            cursor: None,
            limit: Self::DEFAULT_LIMIT,
        }
    }

    /// Refuses a page size out of range.
    pub fn check(&self) -> Result<(), ValidationError> {
        if (1..=Self::MAX_LIMIT).contains(&self.limit) {
            Ok(())
        } else {
            Err(ValidationError::new(format!(
                "limit must be between 1 and {}",
                Self::MAX_LIMIT
            )))
        }
    }

    /// How many rows to read: one more than the page, to learn whether more remain.
    pub const fn fetch(&self) -> u32 {
        self.limit + 1
    }
}

/// One page of a list and, when more remain, the cursor of the next page.
#[derive(Debug, Clone, PartialEq)]
pub struct Page<T, C> {
    /// The items, in the list's order.
    pub items: Vec<T>,
    /// Pass as the next request's cursor; `None` on the last page.
    pub next_cursor: Option<C>,
}

impl<T, C> Page<T, C> {
    /// Cuts `rows` (read with [`PageRequest::fetch`]) to `limit`, with the cursor of the
    /// last item kept when more remain.
    pub fn cut(mut rows: Vec<T>, limit: u32, cursor_of: impl Fn(&T) -> C) -> Self {
        let limit = limit as usize;
        let more = rows.len() > limit;
        rows.truncate(limit);
        let next_cursor = if more {
            rows.last().map(cursor_of)
        } else {
            None
        };
        Self {
            items: rows,
            next_cursor,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cut_keeps_a_cursor_only_when_more_remain() {
        let page = Page::cut(vec![1, 2, 3], 2, |n| *n);
        assert_eq!((page.items, page.next_cursor), (vec![1, 2], Some(2)));
        let page = Page::cut(vec![1, 2], 2, |n| *n);
        assert_eq!((page.items, page.next_cursor), (vec![1, 2], None));
    }

    #[test]
    fn limits_are_checked() {
        let ok = |limit| {
            PageRequest::<u8> {
                cursor: None,
                limit,
            }
            .check()
            .is_ok()
        };
        assert!(ok(1) && ok(500));
        assert!(!ok(0) && !ok(501));
        assert_eq!(PageRequest::<u8>::first().fetch(), 101);
    }
}
