//! What a logical line of the conversation is. Shared by the conversation,
//! its markdown reading and the receipt, so that none of them imports another
//! for it; the kind decides a line's prefix and style.

/// What a logical line is; decides its prefix and style.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    User,
    Assistant,
    /// Inside a fenced code block.
    Code,
    /// A ``` fence line.
    Fence,
    Final,
    Error,
    Gate,
    Notice,
    /// The verification receipt under a final answer (computed by stepwise).
    Receipt,
    /// A receipt line that reports a problem (tests failing).
    ReceiptBad,
    Blank,
    /// The rule between one task and the next.
    Separator,
    /// A decline the user made (with their reason), on record.
    Declined,
    /// An approval worth keeping on record: for the whole task, of the
    /// user's own version, of some hunks, or a step auto-approved.
    Approved,
    /// Text of a reply that broke off mid-stream: kept, marked as discarded.
    Discarded,
    /// A reply's `<think>` block: shown dimmed, never part of the answer.
    Thinking,
    /// A line of a program's output under a failed call (the end of a
    /// failing test run), with the program's own colours.
    Output,
}
