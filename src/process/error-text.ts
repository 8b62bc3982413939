/** What a thrown value says: its message, or the value itself where something other than an Error was thrown. */
export function errorText(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
