import { describe, expect, it } from "vitest";
import { DeltaBuffer } from "../src/session/stream/delta-buffer";

describe("DeltaBuffer", () => {
  it("writes the first delta at once and holds the ones of the same burst until release, in order", () => {
    const written: number[] = [];
    const buffer = new DeltaBuffer(60_000);
    buffer.add(() => written.push(1));
    expect(written).toEqual([1]);
    buffer.add(() => written.push(2));
    buffer.add(() => written.push(3));
    expect(written).toEqual([1]);
    buffer.release();
    expect(written).toEqual([1, 2, 3]);
    buffer.release();
    expect(written).toEqual([1, 2, 3]);
  });

  it("writes the held deltas when the window ends, without a release", async () => {
    const written: number[] = [];
    const buffer = new DeltaBuffer(20);
    buffer.add(() => written.push(1));
    await new Promise<void>((resolve) => {
      buffer.add(() => written.push(2));
      buffer.add(() => {
        written.push(3);
        resolve();
      });
    });
    expect(written).toEqual([1, 2, 3]);
  });

  it("holds even the first delta when nobody watches the run live, until release or the window's end", async () => {
    const written: number[] = [];
    const buffer = new DeltaBuffer(60_000);
    buffer.add(() => written.push(1), false);
    buffer.add(() => written.push(2), false);
    expect(written).toEqual([]);
    buffer.release();
    expect(written).toEqual([1, 2]);
    const quick = new DeltaBuffer(10);
    await new Promise<void>((resolve) => {
      quick.add(() => {
        written.push(3);
        resolve();
      }, false);
      expect(written).toEqual([1, 2]);
    });
    expect(written).toEqual([1, 2, 3]);
  });

  it("writes a delta at once again once a quiet window has passed", async () => {
    const written: number[] = [];
    const buffer = new DeltaBuffer(5);
    buffer.add(() => written.push(1));
    const start = Date.now();
    while (Date.now() - start < 10) await new Promise((resolve) => setTimeout(resolve, 5));
    buffer.add(() => written.push(2));
    expect(written).toEqual([1, 2]);
  });
});
