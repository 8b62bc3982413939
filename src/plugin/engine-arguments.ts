// The command line the engine starts a provider plugin with: its own flags, then the engine's address
// (`--logtostderr -v=9 --tracing <endpoint> 127.0.0.1:<port>`, pulumi's buildPluginArguments). No I/O.

/**
 * The flags the engine passes on to a plugin, each with whether its value is the next argument. `--tracing` comes
 * with the endpoint of `pulumi <command> --tracing` as an argument of its own, an address too (`tcp://…`), which
 * must not be taken for the engine's. Pulumi's Go providers read them with Go's flag package, which also takes
 * `--flag=value` and a single dash.
 */
const engineFlags: Readonly<Record<string, { takesValue: boolean }>> = {
  tracing: { takesValue: true },
  logtostderr: { takesValue: false },
  logflow: { takesValue: false },
  v: { takesValue: true },
};

/** The engine's address among the plugin's arguments (the first that is no flag nor a flag's value), if any. */
export function engineAddressOf(args: readonly string[]): string | undefined {
  for (let index = 0; index < args.length; index++) {
    const arg = args[index] as string;
    if (!arg.startsWith("-")) return arg;
    const [name = "", value] = arg.replace(/^--?/, "").split("=", 2);
    if (value === undefined && engineFlags[name]?.takesValue) index++;
  }
  return undefined;
}
