// Imported first by the provider's entry points: the compile cache must be on before the modules it caches load.
import { enableProviderCompileCache } from "./compile-cache";

enableProviderCompileCache();
