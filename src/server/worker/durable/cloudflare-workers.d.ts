// The Workers runtime's built-in module, for the main tsconfig (which types Node, not the
// Workers globals): only what the Durable Object classes import.
declare module "cloudflare:workers" {
  import type { CloudflareWorkersModule } from "@cloudflare/workers-types/index.ts";
  export const DurableObject: typeof CloudflareWorkersModule.DurableObject;
  export type DurableObject<Env = unknown> = CloudflareWorkersModule.DurableObject<Env>;
}
