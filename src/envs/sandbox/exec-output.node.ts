/**
 * An exec's output as the sandbox interface returns it: stdout and stderr interleaved in the
 * order they arrived, the first `maxBytes` kept, everything counted. Past the cap the command
 * is still read to its end (so it never blocks on a full pipe), but nothing more is stored.
 *
 * @example
 * const out = new OutputCollector(65_536);
 * out.add(chunk);
 * out.result(); // { output, outputBytes, truncated }
 */
export class OutputCollector {
  private readonly kept: Buffer[] = [];
  private keptBytes = 0;
  private total = 0;

  constructor(private readonly maxBytes: number) {}

  add(bytes: Buffer): void {
    this.total += bytes.length;
    const room = this.maxBytes - this.keptBytes;
    if (room <= 0 || bytes.length === 0) return;
    // Copied: the caller's buffer may be a view into a socket chunk it reuses.
    const part = Buffer.from(bytes.subarray(0, room));
    this.kept.push(part);
    this.keptBytes += part.length;
  }

  /** UTF-8, invalid bytes (also a character cut at the cap) replaced with U+FFFD. */
  result(): { output: string; outputBytes: number; truncated: boolean } {
    return { output: Buffer.concat(this.kept).toString("utf8"), outputBytes: this.total, truncated: this.total > this.keptBytes };
  }
}
