import { describe, expect, it } from "vitest";
import { instanceTypeFor } from "./instance-type.js";

describe("instanceTypeFor", () => {
  it("gives a task that names no limit one CPU and 2 GB", () => {
    expect(instanceTypeFor([{}]).name).toBe("standard-2");
  });

  it("takes the smallest type that holds every limit", () => {
    expect(instanceTypeFor([{ cpus: 0.25, memoryMb: 512, storageMb: 1000 }]).name).toBe("basic");
    expect(instanceTypeFor([{ cpus: 0.05, memoryMb: 200, storageMb: 1000 }]).name).toBe("lite");
    expect(instanceTypeFor([{ cpus: 2, memoryMb: 1024, storageMb: 1000 }]).name).toBe("standard-3");
  });

  it("holds the largest need of tasks sharing one image", () => {
    expect(instanceTypeFor([{ cpus: 0.25, memoryMb: 512, storageMb: 1000 }, { cpus: 0.5, memoryMb: 3000, storageMb: 1000 }]).name).toBe("standard-1");
  });

  it("refuses a task larger than any type instead of running it on less", () => {
    expect(() => instanceTypeFor([{ cpus: 8 }])).toThrow(/no Containers instance type holds 8 CPUs/);
    expect(() => instanceTypeFor([{ memoryMb: 65536 }])).toThrow(/65536 MB memory/);
  });
});
