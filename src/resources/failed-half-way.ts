// A create or update that changed the service part of the way fails with what the engine records in state
// (`properties`, see partialFailure in provider-context.ts). Every layer that shapes what a provider answers (keys for
// the wire, secrets, the service's address) shapes those properties as it shapes a success's outputs. No I/O.

/** A `.catch` that rethrows the failure with its recorded properties, if any, passed through `map`. */
export function rethrowRecordedAs(map: (properties: Record<string, unknown>) => Record<string, unknown>) {
  return (error: unknown): never => {
    const failure = error as { properties?: unknown };
    if (typeof failure?.properties === "object" && failure.properties !== null) {
      failure.properties = map(failure.properties as Record<string, unknown>);
    }
    throw error;
  };
}
