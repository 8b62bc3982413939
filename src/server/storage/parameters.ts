// The local server's table of policy set parameters.

import { Table } from "./database";
import { type ParameterRecord, randomId } from "./records";
import { definedOnly, toParameter } from "./rows";

/** Policy set parameters. */
export class ParametersTable extends Table {
  /** Creates the parameter, or answers `"key-taken"` when the set has one of that key. */
  createParameter(parameter: Omit<ParameterRecord, "id">): ParameterRecord | "key-taken" {
    return this.transaction(() => {
      if (
        this.get(
          "SELECT 1 FROM policy_set_parameters WHERE policy_set_id = ? AND key = ?",
          parameter.policySetId,
          parameter.key,
        )
      ) {
        return "key-taken";
      }
      const id = randomId("var");
      this.run(
        "INSERT INTO policy_set_parameters (id, policy_set_id, key, value, sensitive) VALUES (?, ?, ?, ?, ?)",
        id,
        parameter.policySetId,
        parameter.key,
        parameter.value,
        parameter.sensitive ? 1 : 0,
      );
      return this.parameter(id)!;
    });
  }

  parameter(id: string): ParameterRecord | undefined {
    const row = this.get("SELECT id, policy_set_id, key, value, sensitive FROM policy_set_parameters WHERE id = ?", id);
    return row && toParameter(row);
  }

  parameters(policySetId: string): ParameterRecord[] {
    return this.all(
      "SELECT id, policy_set_id, key, value, sensitive FROM policy_set_parameters WHERE policy_set_id = ? ORDER BY rowid",
      policySetId,
    ).map(toParameter);
  }

  updateParameter(
    id: string,
    changes: Partial<Pick<ParameterRecord, "key" | "value" | "sensitive">>,
  ): ParameterRecord | "key-taken" | undefined {
    return this.transaction(() => {
      const current = this.parameter(id);
      if (!current) return undefined;
      const next = { ...current, ...definedOnly(changes) };
      if (
        next.key !== current.key &&
        this.get(
          "SELECT 1 FROM policy_set_parameters WHERE policy_set_id = ? AND key = ?",
          current.policySetId,
          next.key,
        )
      ) {
        return "key-taken";
      }
      this.run(
        "UPDATE policy_set_parameters SET key = ?, value = ?, sensitive = ? WHERE id = ?",
        next.key,
        next.value,
        next.sensitive ? 1 : 0,
        id,
      );
      return this.parameter(id);
    });
  }

  deleteParameter(id: string): boolean {
    return this.transaction(() => Number(this.run("DELETE FROM policy_set_parameters WHERE id = ?", id).changes) > 0);
  }
}
