/// Where an event sits in the order live readers see the audit log (the event stream).
///
/// The order is the order in which the writes that recorded the events became final, so a
/// reader that remembers the last position it handed out and later asks for what comes
/// after it never misses an event that was still being written, and never sees one
/// twice. Positions are compared as `(tx, seq)`; their values mean nothing outside the
/// database that assigned them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct EventPosition {
    /// The writing transaction's place (0 on engines whose writers never overlap).
    pub tx: i64,
    /// The event's place among the events of its transaction (and, on engines whose
    /// writers never overlap, among all events).
    pub seq: i64,
}

impl EventPosition {
    /// The position `(tx, seq)`.
    pub const fn new(tx: i64, seq: i64) -> Self {
        Self { tx, seq }
    }
}

/// Where a new live reader of one organization starts: after `after`, passing over the
/// events in `recorded` (ones that came after that place but were already recorded when
/// the reader started, which it is not meant to see).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct StreamStart {
    /// Read after this position.
    pub after: EventPosition,
    /// Positions after `after` to pass over, in ascending order.
    pub recorded: Vec<EventPosition>,
}
