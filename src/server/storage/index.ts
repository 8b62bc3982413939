// Everything the local server knows, in one SQLite database: `Storage` is one object for the routes, made of one
// table module each (organizations, policy sets, scope targets, version control, versions, parameters, policies,
// modules, runs) over one database (database.ts). A table's methods run in its own module; Storage lends them out.

import { Database } from "./database";
import { ModulesTable } from "./modules";
import { OrganizationsTable } from "./organizations";
import { ParametersTable } from "./parameters";
import { PoliciesTable } from "./policies";
import { PolicySetsTable } from "./policy-sets";
import { RunsTable } from "./runs";
import { ScopeTargetsTable } from "./scope-targets";
import { VcsTable } from "./vcs";
import { VersionsTable } from "./versions";

export * from "./records";

type Public<T> = Pick<T, keyof T>;

/** The database's own operations and every table's, as one store. */
export interface Storage
  extends Public<Database>,
    Public<OrganizationsTable>,
    Public<PolicySetsTable>,
    Public<ScopeTargetsTable>,
    Public<VcsTable>,
    Public<VersionsTable>,
    Public<ParametersTable>,
    Public<PoliciesTable>,
    Public<ModulesTable>,
    Public<RunsTable> {}

/**
 * Everything the server knows, in one SQLite database. Each change runs in one `BEGIN IMMEDIATE` transaction, which
 * takes the write lock up front: a check followed by a write (e.g. "is the name free?") cannot interleave with
 * another writer, even one in another process on the same file.
 */
export class Storage {
  constructor(file: string) {
    const database = new Database(file);
    lend(this, [
      database,
      new OrganizationsTable(database),
      new PolicySetsTable(database),
      new ScopeTargetsTable(database),
      new VcsTable(database),
      new VersionsTable(database),
      new ParametersTable(database),
      new PoliciesTable(database),
      new ModulesTable(database),
      new RunsTable(database),
    ]);
  }
}

/** Gives `target` each public method of each of `sources`, bound to it; a name two sources share is a mistake. */
function lend(target: object, sources: object[]): void {
  const lent = target as Record<string, unknown>;
  for (const source of sources) {
    const methods = source as Record<string, unknown>;
    for (const name of Object.getOwnPropertyNames(Object.getPrototypeOf(source))) {
      if (name === "constructor" || typeof methods[name] !== "function") continue;
      if (name in lent) throw new Error(`Storage: two tables define ${name}`);
      lent[name] = (methods[name] as (...args: unknown[]) => unknown).bind(source);
    }
  }
}
