// Each membership of a policy in a set has one owning resource: a Policy's policySetIds, or a PolicySet's policyIds.
// Declared in both, a change on one side would be undone by the other at every run. The engine's one provider
// process serves every resource of an operation, so the declarations seen by each diff meet here.

const declarations = new Map<string, string>();

/**
 * Forgets every declaration: a new operation. The engine starts the provider's process anew for each command, so
 * in a user's run this never happens; a driver that runs several operations in one process calls it between them.
 */
export function clearMembershipDeclarations(): void {
  declarations.clear();
}

/** Who declares a membership, for the refusal: the resource's URN where the program gave it, else its name. */
export function ownerOf(kind: "Policy" | "PolicySet", property: string, news: Record<string, unknown>): string {
  const urn = news.__urn;
  return `${kind} ${typeof urn === "string" ? urn.split("::").pop() : `"${String(news.name)}"`} (${property})`;
}

/**
 * Records that `owner` declares policy `policyId` in set `setId`; the other owner when another resource declared the
 * same membership in this operation.
 */
export function declareMembership(policyId: string, setId: string, owner: string): string | undefined {
  const key = `${policyId}\u0000${setId}`;
  const other = declarations.get(key);
  if (other !== undefined && other !== owner) return other;
  declarations.set(key, owner);
  return undefined;
}

/** The refusal of a membership declared twice, naming both owners and the fix. */
export function twiceDeclared(policyId: string, setId: string, here: string, other: string): string {
  return (
    `policy ${policyId} is declared a member of policy set ${setId} twice: by ${here} and by ${other}. Each ` +
    "membership has one owner, or a change on one side is undone by the other at every run: remove it from one"
  );
}
