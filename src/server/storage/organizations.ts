// The local server's table of organizations and the tokens that reach them.

import { Table } from "./database";
import type { OrganizationRecord, Row, TokenRecord } from "./records";

/** Organizations and the tokens that reach them. */
export class OrganizationsTable extends Table {
  addOrganization(organization: OrganizationRecord): void {
    this.transaction(() =>
      this.run(
        "INSERT INTO organizations (name, plus) VALUES (?, ?) ON CONFLICT (name) DO UPDATE SET plus = excluded.plus",
        organization.name,
        organization.plus ? 1 : 0,
      ),
    );
  }

  organization(name: string): OrganizationRecord | undefined {
    const row = this.get("SELECT name, plus FROM organizations WHERE name = ?", name);
    return row && { name: String(row.name), plus: row.plus === 1 };
  }

  organizations(): OrganizationRecord[] {
    return this.all("SELECT name, plus FROM organizations ORDER BY name").map((row) => ({
      name: String(row.name),
      plus: row.plus === 1,
    }));
  }

  addToken(token: TokenRecord): void {
    this.transaction(() => {
      this.run(
        `INSERT INTO tokens (token, manage_policies, manage_modules) VALUES (?, ?, ?) ON CONFLICT (token)
         DO UPDATE SET manage_policies = excluded.manage_policies, manage_modules = excluded.manage_modules`,
        token.token,
        token.managePolicies ? 1 : 0,
        token.manageModules ? 1 : 0,
      );
      this.run("DELETE FROM token_organizations WHERE token = ?", token.token);
      for (const organization of token.organizations) {
        this.run("INSERT INTO token_organizations (token, organization) VALUES (?, ?)", token.token, organization);
      }
    });
  }

  token(value: string): TokenRecord | undefined {
    const row = this.get("SELECT token, manage_policies, manage_modules FROM tokens WHERE token = ?", value);
    return row && this.toToken(row);
  }

  tokens(): TokenRecord[] {
    return this.all("SELECT token, manage_policies, manage_modules FROM tokens ORDER BY rowid").map((row) =>
      this.toToken(row),
    );
  }

  private toToken(row: Row): TokenRecord {
    const token = String(row.token);
    return {
      token,
      organizations: this.all("SELECT organization FROM token_organizations WHERE token = ? ORDER BY 1", token).map(
        (entry) => String(entry.organization),
      ),
      managePolicies: row.manage_policies === 1,
      manageModules: row.manage_modules === 1,
    };
  }
}
