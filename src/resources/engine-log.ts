import { createRequire } from "node:module";

/**
 * Warnings a provider sends to the Pulumi engine for one resource, so that Pulumi shows them under that resource
 * (in the progress view and in the Diagnostics section) as it shows its own. What a provider process prints on
 * stderr the engine shows under the stack, far from the resource it is about; the dynamic-provider API hands a
 * provider no resource's URN and no engine connection, so the program passes the URN as the internal input `__urn`
 * (internal keys are never shown in a diff), and the engine's address is the last argument the engine started this
 * process with. Where either is missing (a unit test, an engine that starts providers otherwise), the warning goes to
 * stderr as before.
 */
export class EngineLog {
  /**
   * The engine's address where the process is the plugin for other languages (the engine starts it with the address
   * as its argument); the dynamic-provider host's is read from its command line.
   */
  static engineAddress: string | undefined;

  /**
   * Pulumi's generated engine client and the grpc-js it is built on, where the process has them already loaded (the
   * plugin, a bundle, where no package can be resolved at run time); the dynamic-provider host's are resolved from
   * @pulumi/pulumi.
   */
  static engineModules: EngineModules | undefined;

  /** The connection to the engine, with the address it was made for; none until the first message. */
  private engine: { address: string | undefined; connection: EngineConnection | null } | undefined;

  warn(urn: unknown, message: string): Promise<void> {
    return this.send(urn, message, "warning");
  }

  /** A fact under the resource that is no warning: what a diff cannot show, as a secret that changed. */
  info(urn: unknown, message: string): Promise<void> {
    return this.send(urn, message, "info");
  }

  private async send(urn: unknown, message: string, severity: Severity): Promise<void> {
    const engine = typeof urn === "string" && urn.startsWith("urn:pulumi:") ? this.connect() : null;
    if (engine) {
      try {
        await engine.log(urn as string, message, severity);
        return;
      } catch {
        // The engine went away or refused: stderr still reaches the user.
      }
    }
    console.error(`${severity}: ${message}`);
  }

  close(): void {
    this.engine?.connection?.close();
    this.engine = { address: EngineLog.engineAddress, connection: null };
  }

  /**
   * The connection to the engine at {@link EngineLog.engineAddress}. A plugin the engine attached to
   * (PULUMI_DEBUG_PROVIDERS) serves command after command, each its own engine at an address of its own (Attach): the
   * connection to the last one is dropped, or the next command's messages would go to an engine that is gone.
   */
  private connect(): EngineConnection | null {
    if (this.engine === undefined || this.engine.address !== EngineLog.engineAddress) {
      this.engine?.connection?.close();
      this.engine = { address: EngineLog.engineAddress, connection: engineConnection() };
    }
    return this.engine.connection;
  }
}

type Severity = "warning" | "info";

interface EngineConnection {
  log(urn: string, message: string, severity: Severity): Promise<void>;
  close(): void;
}

/** The engine that started this process (the dynamic-provider host, or the plugin), or null when there is none. */
function engineConnection(): EngineConnection | null {
  const script = process.argv[1] ?? "";
  const address = EngineLog.engineAddress ?? process.argv.at(-1) ?? "";
  const started = EngineLog.engineAddress !== undefined || /dynamic-provider[\\/]index\.js$/.test(script);
  if (!started || !/^[\w.[\]:-]+:\d+$/.test(address)) return null;
  try {
    const { grpc, services, messages } = EngineLog.engineModules ?? modulesOfPulumi();
    const client = new services.EngineClient(address, grpc.credentials.createInsecure());
    return {
      log: (urn, message, severity) =>
        new Promise((done, fail) => {
          const request = new messages.LogRequest();
          request.setSeverity(severity === "info" ? messages.LogSeverity.INFO : messages.LogSeverity.WARNING);
          request.setMessage(message);
          request.setUrn(urn);
          client.log(request, (error: Error | null) => (error ? fail(error) : done()));
        }),
      close: () => client.close(),
    };
  } catch {
    return null;
  }
}

/** Pulumi's own generated gRPC code and the grpc-js it is built on, as @pulumi/pulumi resolves them. */
function modulesOfPulumi(): EngineModules {
  const fromPulumi = createRequire(require.resolve("@pulumi/pulumi/package.json"));
  return {
    grpc: fromPulumi("@grpc/grpc-js"),
    services: fromPulumi("@pulumi/pulumi/proto/engine_grpc_pb.js"),
    messages: fromPulumi("@pulumi/pulumi/proto/engine_pb.js"),
  };
}

export interface EngineModules {
  grpc: { credentials: { createInsecure(): unknown } };
  services: EngineServices;
  messages: EngineMessages;
}

interface EngineServices {
  EngineClient: new (
    address: string,
    credentials: unknown,
  ) => {
    log(request: unknown, callback: (error: Error | null) => void): void;
    close(): void;
  };
}

interface EngineMessages {
  LogRequest: new () => {
    setSeverity(severity: number): void;
    setMessage(message: string): void;
    setUrn(urn: string): void;
  };
  LogSeverity: { WARNING: number; INFO: number };
}
