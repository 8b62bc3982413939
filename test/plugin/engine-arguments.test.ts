import { describe, expect, it } from "vitest";
import { engineAddressOf } from "../../src/plugin/engine-arguments";

describe("the engine's address among the plugin's arguments", () => {
  // The argument lists the engine builds (pulumi's buildPluginArguments and its tests).
  it.each([
    [["127.0.0.1:12345"], "127.0.0.1:12345"],
    [["--logtostderr", "-v=9", "127.0.0.1:12345"], "127.0.0.1:12345"],
    [["--tracing", "127.0.0.1:6007", "127.0.0.1:12345"], "127.0.0.1:12345"],
    [["--logtostderr", "-v=9", "--tracing", "tcp://127.0.0.1:6007", "127.0.0.1:12345"], "127.0.0.1:12345"],
    [["--tracing=tcp://127.0.0.1:6007", "--logflow", "127.0.0.1:12345"], "127.0.0.1:12345"],
  ])("%j: %s", (args, address) => {
    expect(engineAddressOf(args)).toBe(address);
  });

  it("is none where the engine gave none (a plugin started by hand, which the engine attaches to)", () => {
    expect(engineAddressOf([])).toBeUndefined();
    expect(engineAddressOf(["--tracing", "tcp://127.0.0.1:6007"])).toBeUndefined();
  });
});
