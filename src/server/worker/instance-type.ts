/**
 * The Cloudflare Containers instance type for a task's limits: the smallest named type with
 * at least the task's CPUs, memory and disk. The table is wrangler's (config-schema.json,
 * `containers[].instance_type`, wrangler 4.x); a task that needs more than the largest
 * type is refused at build time rather than run on less than it asked for.
 */
import type { SandboxLimits } from "../../envs/sandbox/types.js";

export interface InstanceType {
  name: "lite" | "basic" | "standard-1" | "standard-2" | "standard-3" | "standard-4";
  vcpu: number;
  memoryMb: number;
  diskMb: number;
}

export const INSTANCE_TYPES: readonly InstanceType[] = [
  { name: "lite", vcpu: 1 / 16, memoryMb: 256, diskMb: 2000 },
  { name: "basic", vcpu: 1 / 4, memoryMb: 1024, diskMb: 4000 },
  { name: "standard-1", vcpu: 1 / 2, memoryMb: 4096, diskMb: 8000 },
  { name: "standard-2", vcpu: 1, memoryMb: 6144, diskMb: 12000 },
  { name: "standard-3", vcpu: 2, memoryMb: 8192, diskMb: 16000 },
  { name: "standard-4", vcpu: 4, memoryMb: 12288, diskMb: 20000 },
];

/**
 * What a box needs where its task names no limit. Harbor sets none then (the container may
 * use the whole machine), and a Containers instance must have a size: one CPU and 2 GB
 * memory, which the fixture and typical SWE tasks fit.
 */
const UNSTATED = { cpus: 1, memoryMb: 2048, storageMb: 2000 };

/** The smallest type that holds every one of these limits; throws naming the limit no type holds. */
export function instanceTypeFor(limits: readonly Pick<SandboxLimits, "cpus" | "memoryMb" | "storageMb">[]): InstanceType {
  const need = {
    cpus: Math.max(...limits.map((l) => l.cpus ?? UNSTATED.cpus)),
    memoryMb: Math.max(...limits.map((l) => l.memoryMb ?? UNSTATED.memoryMb)),
    storageMb: Math.max(...limits.map((l) => l.storageMb ?? UNSTATED.storageMb)),
  };
  const fit = INSTANCE_TYPES.find((t) => t.vcpu >= need.cpus && t.memoryMb >= need.memoryMb && t.diskMb >= need.storageMb);
  if (!fit) {
    const largest = INSTANCE_TYPES[INSTANCE_TYPES.length - 1] as InstanceType;
    throw new Error(
      `no Containers instance type holds ${need.cpus} CPUs, ${need.memoryMb} MB memory and ${need.storageMb} MB disk (the largest, ${largest.name}, has ${largest.vcpu}, ${largest.memoryMb} and ${largest.diskMb})`,
    );
  }
  return fit;
}
