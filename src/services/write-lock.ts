// How long each kind of write waits for the embedded database's write lock while another process
// holds it (an import, for minutes): always asynchronously, never blocking the event loop
// (db/connect.ts whenWritable and writeTransaction), then WriterBusy (reason `busy`: the
// dashboard's busy page, the CLI's exit code 1), with nothing written. PostgreSQL has no such
// lock: there these bounds never come into play.

/** A person waiting for a page or a command: a server's own writes take milliseconds; an import would keep them waiting for minutes. */
export const INTERACTIVE_WRITE_WAIT_MS = 3_000;
/**
 * A write that completes an action already made, e.g. the one-time message that shows a key just
 * created: the lock was free a moment before, and giving up would leave the action without it.
 */
export const FOLLOW_UP_WRITE_WAIT_MS = 30_000;
/**
 * Bookkeeping that is skipped or deferred when the lock is taken (last_used_at, a session's last
 * visit, usage counts, claims): one attempt.
 */
export const BACKGROUND_WRITE_WAIT_MS = 0;
