// Loaded before Node.js is known to be new enough (by the commands' entries): plain code, no dependency.

/** The codes a write gives once the reader of a pipe has gone: EPIPE, then on a stream already torn down. */
const readerGone = new Set(["EPIPE", "ERR_STREAM_DESTROYED"]);

/**
 * Calls `whenGone` once the reader of `stream` goes (`tfe-governance impact ... | head`). Without a listener Node
 * turns the EPIPE of the next write into a stack trace and status 1; any other error is thrown as before.
 */
export function onReaderGone(stream: NodeJS.WritableStream, whenGone: () => void): void {
  let gone = false;
  stream.on("error", (error: NodeJS.ErrnoException) => {
    if (!readerGone.has(error.code ?? "")) throw error;
    if (gone) return;
    gone = true;
    whenGone();
  });
}

/**
 * A command whose reader went stops at once and quietly, as a Unix tool that SIGPIPE ends: status 141 (128 +
 * SIGPIPE), which `set -o pipefail` reads as a failure. A verdict not delivered whole (impact's, a check's) is no
 * pass.
 */
export function stopWhenReaderGoes(stream: NodeJS.WritableStream = process.stdout): void {
  // Once per stream, whichever entry (tfe-governance, the plugin's command mode) gets there first.
  if (stopping.has(stream)) return;
  stopping.add(stream);
  onReaderGone(stream, () => process.exit(141));
}

const stopping = new WeakSet<NodeJS.WritableStream>();
