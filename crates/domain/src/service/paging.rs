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

impl<T, C: Copy + Ord> Page<T, C> {
    /// One page of `all`, a short list read whole, newest first under time-ordered ids
    /// (a user's API keys, an organization's hooks or inbound keys): the items older
    /// than the request's cursor, at most its limit. Refuses a page size out of range.
    pub fn of_newest_first(
        all: Vec<T>,
        page: &PageRequest<C>,
        id_of: impl Fn(&T) -> C,
    ) -> Result<Self, ValidationError> {
        page.check()?;
        let rows: Vec<T> = all
            .into_iter()
            .filter(|item| page.cursor.is_none_or(|cursor| id_of(item) < cursor))
            .take(page.fetch() as usize)
            .collect();
        Ok(Self::cut(rows, page.limit, id_of))
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
    fn a_list_read_whole_pages_by_its_ids() {
        let all = vec![9, 7, 5, 3, 1];
        let first = PageRequest {
            cursor: None,
            limit: 2,
        };
        let page = Page::of_newest_first(all.clone(), &first, |n| *n).unwrap();
        assert_eq!((page.items, page.next_cursor), (vec![9, 7], Some(7)));
        let next = PageRequest {
            cursor: Some(7),
            limit: 2,
        };
        let page = Page::of_newest_first(all.clone(), &next, |n| *n).unwrap();
        assert_eq!((page.items, page.next_cursor), (vec![5, 3], Some(3)));
        // A cursor whose item is gone still pages on from where it stood.
        let gone = PageRequest {
            cursor: Some(4),
            limit: 2,
        };
        let page = Page::of_newest_first(all.clone(), &gone, |n| *n).unwrap();
        assert_eq!((page.items, page.next_cursor), (vec![3, 1], None));
        let too_big = PageRequest {
            cursor: None,
            limit: 501,
        };
        assert!(Page::of_newest_first(all, &too_big, |n| *n).is_err());
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
