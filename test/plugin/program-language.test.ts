import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { inProgramLanguage, programLanguage } from "../../src/plugin/program-language";
import { failureForProgram } from "../../src/plugin/provider";

const names = ["allowWeakening", "enforcementLevel", "adoptExisting", "name", "folderPolicies"];
const refusal =
  'policy "guard" weakens governance: enforcementLevel goes from hard-mandatory to advisory. If that is intended, ' +
  'set allowWeakening: true on this resource, run "pulumi config set tfegov:allowWeakening true" for the stack, ' +
  "or set TFE_ALLOW_WEAKENING=true for one run; folderPolicies.deny was lowered; set adoptExisting: false";

describe("messages in the program's language", () => {
  it("spells arguments as Python, Go and C# write them, and leaves settings, variables and YAML alone", () => {
    expect(inProgramLanguage(refusal, "python", names)).toBe(
      'policy "guard" weakens governance: enforcement_level goes from hard-mandatory to advisory. If that is ' +
        'intended, set allow_weakening=True on this resource, run "pulumi config set tfegov:allowWeakening true" for ' +
        "the stack, or set TFE_ALLOW_WEAKENING=true for one run; folder_policies.deny was lowered; set " +
        "adopt_existing=False",
    );
    expect(inProgramLanguage(refusal, "go", names)).toContain(
      "EnforcementLevel goes from hard-mandatory to advisory. If that is intended, set AllowWeakening: " +
        'pulumi.Bool(true) on this resource, run "pulumi config set tfegov:allowWeakening true"',
    );
    expect(inProgramLanguage(refusal, "dotnet", names)).toContain("set AllowWeakening = true on this resource");
    expect(inProgramLanguage(refusal, "yaml", names)).toBe(refusal);
    expect(inProgramLanguage(refusal, "nodejs", names)).toBe(refusal);
  });

  it("reads the language from the project's Pulumi.yaml, in either form of runtime", async () => {
    const dir = await mkdtemp(join(tmpdir(), "program-language-"));
    try {
      await writeFile(join(dir, "Pulumi.yaml"), "name: p\nruntime: python\n");
      expect(programLanguage(dir)).toBe("python");
      await writeFile(join(dir, "Pulumi.yaml"), "name: p\nruntime:\n  name: go\n  options:\n    binary: x\n");
      expect(programLanguage(dir)).toBe("go");
      await rm(join(dir, "Pulumi.yaml"));
      expect(programLanguage(dir)).toBe("other");
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});

describe("a check failure as the engine prints it", () => {
  const failure = {
    property: "enforcementLevel",
    reason: 'enforcementLevel "hard-mandatry" is not an enforcement level of sentinel policies',
  };
  it("names no schema property where the language spells it otherwise, so the reason alone names it", () => {
    for (const [language, spelled] of [
      ["python", "enforcement_level"],
      ["go", "EnforcementLevel"],
      ["dotnet", "EnforcementLevel"],
    ] as const) {
      const said = failureForProgram(failure, (text) => inProgramLanguage(text, language, names));
      expect(said).toEqual({ property: "", reason: failure.reason.replace("enforcementLevel", spelled) });
    }
    expect(failureForProgram(failure, (text) => inProgramLanguage(text, "yaml", names))).toEqual(failure);
  });
});
