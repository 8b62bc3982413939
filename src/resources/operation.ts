import { randomUUID } from "node:crypto";

// What tells a diff of a change the program asks for from the diff the engine computes to display a refresh. The
// engine calls a provider's diff in both: for `up` and `preview` with the inputs `check` just returned, and for
// `refresh` with the state's old inputs (against the refreshed outputs, to show what changed outside). Only the
// first is a change to guard: refusing the second would make a refresh fail for what it found. `check` stamps its
// inputs with this process's mark (the engine starts the provider anew for each command), and the guard judges only
// inputs that carry it. The key is internal (`__`): no diff compares it and no display shows it.

const stampKey = "__checked";
const thisOperation = randomUUID();

/** The inputs `check` returns, stamped as checked in this operation. */
export function stampChecked<T extends Record<string, unknown>>(inputs: T): T {
  return { ...inputs, [stampKey]: thisOperation };
}

/** Whether `news` came from `check` in this operation: a change the program asks for now. */
export function checkedThisOperation(news: object): boolean {
  return (news as Record<string, unknown>)[stampKey] === thisOperation;
}
