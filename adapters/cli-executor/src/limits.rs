//! Every bound of the core, named big-endian with its unit last (Tiger Style).

/// The longest line accepted from the app-server. A `thread/read` of a long thread is the
/// largest message; past this the line is refused rather than parsed.
pub const LINE_BYTES_MAX: usize = 16 * 1024 * 1024;

/// Requests the core keeps outstanding at once. The app-server answers in milliseconds; a
/// full table means it stopped answering, and more requests would only pile up.
pub const REQUESTS_IN_FLIGHT_MAX: usize = 64;

/// How long a request may go unanswered before the core gives up on it and says so.
pub const REQUEST_TIMEOUT_MS: u64 = 30_000;

/// Commands held while the app-server is not initialized yet or a turn is still running
/// (idle delivery: a send waits for the turn's end, at most until its deadline).
pub const COMMANDS_WAITING_MAX: usize = 64;

/// Threads (conversations) one app-server hosts for this core.
pub const THREADS_MAX: usize = 256;

/// Nonces remembered per thread to tell our turns from foreign ones. Older nonces are
/// forgotten first; `thread/read` reconciliation does not depend on this memory.
pub const NONCES_PER_THREAD_MAX: usize = 1_024;

/// Characters of CLI text kept for people (an error message, a limit notice), as the
/// engine's `PAGE_DETAIL_CHARS_MAX`.
pub const DETAIL_CHARS_MAX: usize = engine::limits::PAGE_DETAIL_CHARS_MAX;

/// Characters kept from the end of a turn's last agent message: the end-of-response
/// block the engine parses is at the tail.
pub const BLOCK_CHARS_MAX: usize = 4_096;
