// How a name a person mistyped is matched to the one meant, for every "did you mean" of the library's messages.

/** The candidate a typo most likely meant: the same but for case, else the fewest edits within `maxEdits`. */
export function closestName(name: string, candidates: readonly string[], maxEdits = 2): string | undefined {
  const lower = name.toLowerCase();
  const sameButCase = candidates.find((candidate) => candidate.toLowerCase() === lower);
  if (sameButCase) return sameButCase;
  let best: { candidate: string; distance: number } | undefined;
  for (const candidate of candidates) {
    const distance = editDistance(lower, candidate.toLowerCase());
    if (distance <= maxEdits && (!best || distance < best.distance)) best = { candidate, distance };
  }
  return best?.candidate;
}

/** Levenshtein distance, with one row of memory. */
function editDistance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, index) => index);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    for (let j = 1; j <= b.length; j++) {
      const substitution = (previous[j - 1] as number) + (a[i - 1] === b[j - 1] ? 0 : 1);
      current[j] = Math.min((previous[j] as number) + 1, (current[j - 1] as number) + 1, substitution);
    }
    previous = current;
  }
  return previous[b.length] as number;
}
