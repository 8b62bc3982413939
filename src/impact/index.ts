// Whom a stricter policy would block: reading a scope's workspaces, their runs and each run's results, and the one
// answer made of them. Neither a resource nor a command: the resources, `tfe-governance impact` and the read
// function `listPolicyResults` stand on it, and it stands on the client alone.

export { readImpact } from "./read-impact";
export { ResultsCache, type ResultsRead, readResults, type WorkspaceResults, workspacesToRead } from "./reads";
export { needsListing, noReach, type Reach, reaches, stringIds, widens } from "./scope";
export { ImpactSession } from "./session";
export {
  type Answer,
  answerOf,
  type BlockedRun,
  blocks,
  defaultImpactSettings,
  describeAnswer,
  type ImpactSettings,
  isResultOf,
  overridableLevel,
  type PolicyAtLevel,
  type Reading,
  readingOf,
  type StricterChange,
  tfPolicySpellings,
  unread,
  wouldStop,
} from "./verdict";
