import "../process/node-version";
import "../process/provider-process";
import * as grpc from "@grpc/grpc-js";
import * as pluginMessages from "@pulumi/pulumi/proto/plugin_pb";
import { type IResourceProviderServer, ResourceProviderService } from "@pulumi/pulumi/proto/provider_grpc_pb";
import * as messages from "@pulumi/pulumi/proto/provider_pb";
import { Status } from "@pulumi/pulumi/proto/status_pb";
import { Any } from "google-protobuf/google/protobuf/any_pb";
import { Empty } from "google-protobuf/google/protobuf/empty_pb";
import { keepCompiledCode } from "../process/compile-cache";
import { EngineLog } from "../resources/engine-log";
import { startCommand } from "../resources/provider-set";
import { providers } from "../resources/providers";
import { runConstruct } from "./construct";
import { engineAddressOf } from "./engine-arguments";
import { GovernanceProvider } from "./provider";
import { fromStruct, toStruct } from "./struct";

// `pulumi-resource-tfegov`: the resource provider plugin that serves this library to every Pulumi language. One
// server object answers the engine's ResourceProvider protocol with @grpc/grpc-js and Pulumi's generated messages:
// each call one method, which reads its request, hands on to the provider (provider.ts) and writes its response.
// The calls it leaves out (Handshake, Parameterize, Call, List, GetMapping, GetMappings) grpc-js answers
// UNIMPLEMENTED, which the engine reads as "not supported" and goes on without.

EngineLog.engineModules = {
  grpc,
  services: require("@pulumi/pulumi/proto/engine_grpc_pb"),
  messages: require("@pulumi/pulumi/proto/engine_pb"),
};

type Served = Pick<
  IResourceProviderServer,
  | "getPluginInfo"
  | "getSchema"
  | "attach"
  | "checkConfig"
  | "diffConfig"
  | "configure"
  | "invoke"
  | "check"
  | "diff"
  | "create"
  | "read"
  | "update"
  | "delete"
  | "construct"
  | "cancel"
>;

/** How many calls are being answered now (Cancel aside). */
let callsInFlight = 0;

/** A unary call answered by `answer`: its response, or its failure as the call's error. */
function unary<Request, Response>(
  answer: (request: Request) => Response | Promise<Response>,
): grpc.handleUnaryCall<Request, Response> {
  return (call, callback) => {
    callsInFlight++;
    Promise.resolve()
      .then(() => answer(call.request))
      .finally(() => callsInFlight--)
      .then(
        (response) => callback(null, response),
        (error: unknown) => callback(callError(error)),
      );
  };
}

function failures(list: readonly { property: string; reason: string }[] | undefined): messages.CheckFailure[] {
  return (list ?? []).map((each) => new messages.CheckFailure().setProperty(each.property).setReason(each.reason));
}

const { DiffChanges } = messages.DiffResponse;

export class ProviderServer implements Served {
  /** The engine whose Configure this plugin last served: see `configure`. */
  private configuredBy: string | undefined;

  /** Construct calls in flight: an error nothing caught fails them rather than leaving the engine waiting. */
  private readonly constructs = new Set<(error: unknown) => void>();

  constructor(
    private readonly provider: GovernanceProvider,
    private engineAddress: string | undefined,
  ) {
    const failInFlight = (error: unknown) => {
      console.error(error instanceof Error ? (error.stack ?? error.message) : error);
      process.exitCode = 1;
      for (const fail of this.constructs) fail(error);
    };
    process.on("uncaughtException", failInFlight);
    process.on("unhandledRejection", failInFlight);
  }

  getPluginInfo = unary(() => new pluginMessages.PluginInfo().setVersion(this.provider.version));

  getSchema = unary((request: messages.GetSchemaRequest) => {
    if (request.getVersion() !== 0) throw new Error(`unsupported schema version ${request.getVersion()}`);
    return new messages.GetSchemaResponse().setSchema(this.provider.schema);
  });

  /** The engine's address, given where the engine attached to a plugin it did not start (PULUMI_DEBUG_PROVIDERS). */
  attach = unary((request: pluginMessages.PluginAttach) => {
    this.engineAddress = request.getAddress();
    EngineLog.engineAddress = this.engineAddress;
    return new Empty();
  });

  checkConfig = unary((request: messages.CheckRequest) => {
    const result = this.provider.checkConfig(fromStruct(request.getNews()));
    return new messages.CheckResponse().setInputs(toStruct(result.inputs)).setFailuresList(failures(result.failures));
  });

  diffConfig = unary((request: messages.DiffRequest) => {
    const changed = this.provider.diffConfig(fromStruct(request.getOlds()), fromStruct(request.getNews()));
    return new messages.DiffResponse()
      .setChanges(changed.length > 0 ? DiffChanges.DIFF_SOME : DiffChanges.DIFF_NONE)
      .setDiffsList(changed);
  });

  /**
   * The settings reach every provider; secrets arrive wrapped, and are answered wrapped (secrets.ts). They are read
   * from `args` alone: the engine also sends them as `variables` (`tfegov:config:<key>`, every value a string and no
   * secret marked), which it keeps for providers older than `args` and has deprecated.
   */
  configure = unary((request: messages.ConfigureRequest) => {
    // A plugin the engine attached to serves command after command. Each command's engine listens anew and attaches
    // before it configures: a Configure from another engine than the last, or after a Ctrl-C, with nothing else in
    // flight, starts a new command, with nothing of the last one (its Ctrl-C, its listings, the names it claimed,
    // what it said once, its reads of recent runs). An attach that configures nothing (a language host reading the
    // schema) starts none, and a second provider of the same command configures while its first is at work.
    const otherEngine = this.engineAddress !== this.configuredBy;
    const cancelled = Object.values(providers).some((served) => served.context.cancelled);
    if (this.configuredBy !== undefined && (otherEngine || cancelled) && callsInFlight <= 1) {
      startCommand(providers);
      this.provider.startCommand();
    }
    this.configuredBy = this.engineAddress;
    this.provider.configure(fromStruct(request.getArgs()));
    // supportsPreview: the engine calls create and update at preview too (`preview` set), which send nothing and
    // answer what the resource will hold. Without it, an update's preview outputs are its new inputs alone, and an
    // output such as policyId reads as not known to every resource that names it (a set's policyIds would seem to
    // lose the policy a level raise updates).
    return new messages.ConfigureResponse()
      .setAcceptsecrets(true)
      .setAcceptresources(true)
      .setAcceptoutputs(true)
      .setSupportspreview(true);
  });

  invoke = unary(async (request: messages.InvokeRequest) => {
    const result = await this.provider.invoke(request.getTok(), fromStruct(request.getArgs()));
    return new messages.InvokeResponse().setReturn(toStruct(result.outputs)).setFailuresList(failures(result.failures));
  });

  check = unary(async (request: messages.CheckRequest) => {
    const result = await this.provider.check(
      request.getUrn(),
      fromStruct(request.getOlds()),
      fromStruct(request.getNews()),
    );
    return new messages.CheckResponse().setInputs(toStruct(result.inputs)).setFailuresList(failures(result.failures));
  });

  /** The provider's diff, with the detailed diff of the properties the program wrote (detailed-diff.ts). */
  diff = unary(async (request: messages.DiffRequest) => {
    const [olds, news] = [fromStruct(request.getOlds()), fromStruct(request.getNews())];
    const oldInputs = request.getOldInputs()?.toJavaScript() as Record<string, unknown> | undefined;
    const result = await this.provider.diff(request.getId(), request.getUrn(), olds, news, oldInputs);
    const changes = { true: DiffChanges.DIFF_SOME, false: DiffChanges.DIFF_NONE }[String(result.changes)];
    const response = new messages.DiffResponse()
      .setChanges(changes ?? DiffChanges.DIFF_UNKNOWN)
      .setReplacesList(result.replaces ?? [])
      .setDeletebeforereplace(result.deleteBeforeReplace === true);
    if (result.detailedDiff) {
      for (const [path, kind] of Object.entries(result.detailedDiff)) {
        response.getDetaileddiffMap().set(path, new messages.PropertyDiff().setKind(kind).setInputdiff(true));
      }
      const roots = Object.keys(result.detailedDiff).map((path) => /^[^.[]+/.exec(path)?.[0] ?? path);
      response.setDiffsList([...new Set(roots)]).setHasdetaileddiff(true);
    }
    return response;
  });

  create = unary(async (request: messages.CreateRequest) => {
    // At preview nothing is made: its inputs are what is known of it; what the service gives it (ids) is not yet.
    if (request.getPreview()) return new messages.CreateResponse().setProperties(request.getProperties());
    const result = await resourceCall(() =>
      this.provider.create(request.getUrn(), fromStruct(request.getProperties())),
    );
    return new messages.CreateResponse().setId(result.id).setProperties(toStruct(result.outs));
  });

  /**
   * `pulumi import` sends no properties; a resource that is gone answers an empty response, which the engine takes
   * as "does not exist" (and drops from state).
   */
  read = unary(async (request: messages.ReadRequest) => {
    const result = await this.provider.read(request.getId(), request.getUrn(), fromStruct(request.getProperties()));
    const response = new messages.ReadResponse();
    if (!result.id) return response;
    response.setId(result.id).setProperties(toStruct(result.props));
    return result.inputs ? response.setInputs(toStruct(result.inputs)) : response;
  });

  update = unary(async (request: messages.UpdateRequest) => {
    const [olds, news] = [fromStruct(request.getOlds()), fromStruct(request.getNews())];
    // At preview nothing is sent: the new inputs, what the service computed that the update keeps (an id), and the
    // rest not known yet (a count of sets, a version), never the old value of what the update changes.
    if (request.getPreview()) {
      return new messages.UpdateResponse().setProperties(
        toStruct(this.provider.previewUpdate(request.getUrn(), olds, news)),
      );
    }
    const result = await resourceCall(() => this.provider.update(request.getId(), request.getUrn(), olds, news));
    return new messages.UpdateResponse().setProperties(toStruct(result.outs));
  });

  delete = unary(async (request: messages.DeleteRequest) => {
    await this.provider.delete(request.getId(), request.getUrn(), fromStruct(request.getProperties()));
    return new Empty();
  });

  /** A PolicyFolder: the component registers its children through the engine, as a program's would. */
  construct: grpc.handleUnaryCall<messages.ConstructRequest, messages.ConstructResponse> = (call, callback) => {
    const fail = (error: unknown) => callback(callError(error));
    this.constructs.add(fail);
    callsInFlight++;
    runConstruct(call.request, this.engineAddress, (name, type, inputs, options) =>
      this.provider.construct(name, type, inputs, options),
    )
      .then((response) => callback(null, response), fail)
      .finally(() => {
        callsInFlight--;
        this.constructs.delete(fail);
      });
  };

  /**
   * Ctrl-C: every provider's client stops sending (ProviderContext.cancel), so the operations in flight end at their
   * next request, a write already sent let finish and recorded. The engine also sends Cancel when it closes the
   * plugin at the end of every command, with nothing in flight: that one stops nothing, so that a plugin the engine
   * attached to (PULUMI_DEBUG_PROVIDERS), which outlives the command, serves the next one.
   */
  cancel: grpc.handleUnaryCall<Empty, Empty> = (_call, callback) => {
    if (callsInFlight > 0) for (const served of Object.values(providers)) served.context.cancel();
    callback(null, new Empty());
  };
}

/**
 * A create or update whose failure may come after the service made the object: the error carries its id and the
 * properties to record (ErrorResourceInitFailed), so that the engine keeps it in state instead of orphaning it.
 */
async function resourceCall<T>(call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (error) {
    const failed = error as Error & { id?: string; properties?: Record<string, unknown>; reasons?: string[] };
    if (!failed?.id) throw error;
    const detail = new messages.ErrorResourceInitFailed()
      .setId(failed.id)
      .setProperties(toStruct(failed.properties ?? {}))
      .setReasonsList(failed.reasons ?? []);
    const any = new Any();
    any.pack(detail.serializeBinary(), "pulumirpc.ErrorResourceInitFailed");
    const status = new Status().setCode(grpc.status.UNKNOWN).setMessage(failed.message);
    status.addDetails(any);
    const metadata = new grpc.Metadata();
    metadata.add("grpc-status-details-bin", Buffer.from(status.serializeBinary()));
    throw Object.assign(new Error(failed.message), { code: grpc.status.UNKNOWN, details: failed.message, metadata });
  }
}

/** What a failed call answers: the error's message (and metadata where it carries some), status UNKNOWN. */
function callError(error: unknown): grpc.ServiceError {
  if (error instanceof Error) return error as grpc.ServiceError;
  return Object.assign(new Error(String(error)), { code: grpc.status.UNKNOWN }) as grpc.ServiceError;
}

/** Serves the provider on a port of 127.0.0.1, printed on stdout for the engine to connect to. */
async function serve(args: readonly string[]): Promise<void> {
  const engineAddress = engineAddressOf(args);
  EngineLog.engineAddress = engineAddress;
  const { grpcChannelOptions } = require("@pulumi/pulumi/runtime/settings") as { grpcChannelOptions: object };
  const server = new grpc.Server(grpcChannelOptions);
  const served = new ProviderServer(new GovernanceProvider(), engineAddress);
  server.addService(ResourceProviderService, served as unknown as grpc.UntypedServiceImplementation);
  const port = await new Promise<number>((bound, fail) =>
    server.bindAsync("127.0.0.1:0", grpc.ServerCredentials.createInsecure(), (error, port) =>
      error ? fail(error) : bound(port),
    ),
  );
  console.log(String(port));
}

serve(process.argv.slice(2)).then(keepCompiledCode, (error: unknown) => {
  console.error(error);
  process.exit(1);
});
